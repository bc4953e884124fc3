"""Pod signatures (OpportunisticBatching): the shared signers (``kube-scheduler/framework/signers.go``),
each plugin's ``sign_pod`` and ``Framework.sign_pod``.

Upstream's tables are transcribed: ``TestFitSignPod`` and ``TestBalancedAllocationSignPod``
(noderesources), ``TestPodAffinitySignature`` (interpodaffinity), ``TestPodTopoSignatures``
(podtopologyspread), ``TestImageSignature`` (imagelocality) and ``TestSignatures``
(``schedule_one_test.go``: the framework's combination). Upstream compares JSON bytes; fastsched's
signatures are canonical hashable values, so the tests check the values and, where upstream's
rule is about equality, which pods sign equal.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.api import Pod
from fastsched.framework import signers
from fastsched.framework.status import Code, Status
from fastsched.plugins.registry import in_tree_registry
from fastsched.runtime import new_framework
from fastsched.config.types import KubeSchedulerProfile, Plugin, PluginSet, Plugins
from fastsched.testing import make_pod, pod_manifest

LIST_NO_DEFAULTS = {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}


def _config(*plugin_config: dict, **profile) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": list(plugin_config), **profile}]}


def _scheduler(*plugin_config: dict, **profile) -> Scheduler:
    return Scheduler(load_config(_config(*plugin_config, **profile)))


def _pod(spec: dict | None = None, labels: dict | None = None, name: str = "p") -> Pod:
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "busybox"}], **(spec or {})}}
    if labels is not None:
        manifest["metadata"]["labels"] = labels
    return Pod.from_manifest(manifest, validate=False)


def _sign(plugin, pod):
    fragments, status = plugin.sign_pod(pod)
    return dict(fragments or ()), status


# ------------------------------------------------------------------------------------------------
# shared signers
# ------------------------------------------------------------------------------------------------
def test_host_ports_signer_is_the_sorted_set_of_non_zero_host_ports():
    pod = _pod({"containers": [
        {"name": "a", "image": "x", "ports": [{"containerPort": 1, "hostPort": 80, "protocol": "UDP"},
                                              {"containerPort": 2, "hostPort": 0}]},
        {"name": "b", "image": "x", "ports": [{"containerPort": 3, "hostPort": 80}, {"containerPort": 4, "hostPort": 22}]}],
        "initContainers": [{"name": "i", "image": "x", "ports": [{"containerPort": 5, "hostPort": 8080}]}]})
    assert signers.host_ports_signer(pod) == (22, 80, 8080)
    assert signers.host_ports_signer(_pod()) == ()


def test_tolerations_signer_sorts_by_key_then_value_stably():
    a = _pod({"tolerations": [{"key": "b", "operator": "Exists"}, {"key": "a", "value": "2", "effect": "NoSchedule"},
                              {"key": "a", "value": "1", "effect": "NoExecute", "tolerationSeconds": 5}]})
    b = _pod({"tolerations": [{"key": "a", "value": "1", "effect": "NoExecute", "tolerationSeconds": 5},
                              {"key": "b", "operator": "Exists"}, {"key": "a", "value": "2", "effect": "NoSchedule"}]})
    assert signers.tolerations_signer(a) == signers.tolerations_signer(b)
    assert [t[0:3:2] for t in signers.tolerations_signer(a)] == [("a", "1"), ("a", "2"), ("b", "")]
    # the whole toleration is signed: another effect is another signature
    c = _pod({"tolerations": [{"key": "b", "operator": "Exists", "effect": "NoSchedule"}]})
    d = _pod({"tolerations": [{"key": "b", "operator": "Exists"}]})
    assert signers.tolerations_signer(c) != signers.tolerations_signer(d)


def test_node_affinity_signer_sorts_terms_requirements_and_values():
    a = _pod({"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "z", "operator": "In", "values": ["2", "1"]},
                                  {"key": "a", "operator": "Exists"}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}},
            {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["w"]}]}}]}}})
    b = _pod({"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
            {"matchExpressions": [{"key": "a", "operator": "Exists"},
                                  {"key": "z", "operator": "In", "values": ["1", "2"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["w"]}]}},
            {"weight": 5, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}]}}})
    assert signers.node_affinity_signer(a) == signers.node_affinity_signer(b) is not None
    assert signers.node_affinity_signer(_pod()) is None
    assert signers.node_affinity_signer(_pod({"affinity": {"podAffinity": {}}})) is None
    # node affinity without terms: both lists empty (not None)
    assert signers.node_affinity_signer(_pod({"affinity": {"nodeAffinity": {}}})) == ((), ())


def test_volumes_signer_leaves_out_names_configmaps_and_secrets():
    a = _pod({"volumes": [{"name": "x", "persistentVolumeClaim": {"claimName": "c"}},
                          {"name": "cm", "configMap": {"name": "one"}},
                          {"name": "s", "secret": {"secretName": "two"}},
                          {"name": "e", "emptyDir": {}}]})
    b = _pod({"volumes": [{"name": "other", "emptyDir": {}},
                          {"name": "y", "persistentVolumeClaim": {"claimName": "c"}}]})
    assert signers.volumes_signer(a) == signers.volumes_signer(b)
    assert len(signers.volumes_signer(a)) == 2
    c = _pod({"volumes": [{"name": "y", "persistentVolumeClaim": {"claimName": "d"}}]})
    assert signers.volumes_signer(c) != signers.volumes_signer(b)


# ------------------------------------------------------------------------------------------------
# plugins: upstream's tables
# ------------------------------------------------------------------------------------------------
EXTENDED = "extended.resource.dra.io/something"


@pytest.mark.parametrize("case", [
    # TestFitSignPod / TestBalancedAllocationSignPod: (name, requests per container, device class,
    # code, expected (milliCPU, memory, ephemeral storage, allowed pods, scalar resources))
    ("pod with CPU and memory requests", [{"cpu": "1000m", "memory": "2000"}], False, Code.SUCCESS,
     (1000, 2000, 0, 0, ())),
    ("best-effort pod with no requests", [{}], False, Code.SUCCESS, (0, 0, 0, 0, ())),
    ("pod with multiple containers", [{"cpu": "500m", "memory": "1000"}, {"cpu": "1500m", "memory": "3000"}],
     False, Code.SUCCESS, (2000, 4000, 0, 0, ())),
    ("DRA extended resource enabled - returns unschedulable", [{"cpu": "1000m", "memory": "2000", EXTENDED: "1"}],
     True, Code.UNSCHEDULABLE, None),
    # upstream turns the gate off; fastsched (DRAExtendedResource GA) has no DeviceClass for it instead
    ("DRA extended resource disabled", [{"cpu": "1000m", "memory": "2000", EXTENDED: "1"}], False, Code.SUCCESS,
     (1000, 2000, 0, 0, ((EXTENDED, 1),))),
], ids=lambda c: c[0])
@pytest.mark.parametrize("plugin_name", ["NodeResourcesFit", "NodeResourcesBalancedAllocation"])
def test_resources_sign_pod(plugin_name, case):
    _, per_container, device_class, code, expected = case
    s = _scheduler(LIST_NO_DEFAULTS)
    if device_class:
        s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "device-class-name"},
               "spec": {"extendedResourceName": EXTENDED}})
    containers = [{"name": f"c{i}", "image": "busybox", "resources": {"requests": req, "limits": {
        k: v for k, v in req.items() if k == EXTENDED}}} for i, req in enumerate(per_container)]
    pod = _pod({"containers": containers})
    plugin = s.profiles["default-scheduler"].plugins_map[plugin_name]
    fragments, status = _sign(plugin, pod)
    if code == Code.SUCCESS:
        assert status is None
        assert fragments == {signers.RESOURCES_SIGNER: expected}
    else:
        assert fragments == {} and status.code() == code
        assert status.message() == "signature disabled when dra extended resources are used in the cluster"


def test_resources_sign_pod_implicit_device_class_name():
    s = _scheduler(LIST_NO_DEFAULTS)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}})
    plugin = s.profiles["default-scheduler"].plugins_map["NodeResourcesFit"]
    name = "deviceclass.resource.kubernetes.io/gpu"
    pod = _pod({"containers": [{"name": "c", "image": "x", "resources": {"requests": {name: "1"}, "limits": {name: "1"}}}]})
    assert _sign(plugin, pod)[1].code() == Code.UNSCHEDULABLE
    other = _pod({"containers": [{"name": "c", "image": "x", "resources": {"requests": {"example.com/x": "1"},
                                                                          "limits": {"example.com/x": "1"}}}]})
    assert _sign(plugin, other)[1] is None


def test_resources_signature_is_the_aggregate_request_not_the_split():
    # upstream signs computePodResourceRequest: equal totals split differently sign equal
    plugin = _scheduler(LIST_NO_DEFAULTS).profiles["default-scheduler"].plugins_map["NodeResourcesFit"]
    one = _pod({"containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "1"}}}]})
    two = _pod({"containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "500m"}}},
                               {"name": "b", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]})
    assert _sign(plugin, one) == _sign(plugin, two)


@pytest.mark.parametrize("case", [
    # TestPodAffinitySignature: (name, labels, affinity, ignorePreferredTermsOfExistingPods, signed, fragments)
    ("no affinity, default settings", {"foo": "bar"}, None, False, True,
     {signers.LABELS_SIGNER: (("foo", "bar"),)}),
    ("no affinity, ignore setting set", {"foo": "bar"}, None, True, True, {}),
    ("affinity set", {"foo": "bar"}, {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}},
     False, False, {}),
    # not in upstream's table: an empty anti-affinity refuses as well (a non-nil pointer)
    ("empty anti-affinity", {"foo": "bar"}, {"podAntiAffinity": {}}, False, False, {}),
], ids=lambda c: c[0])
def test_inter_pod_affinity_sign_pod(case):
    _, labels, affinity, ignore, signed, expected = case
    args = {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": ignore}}
    plugin = _scheduler(LIST_NO_DEFAULTS, args).profiles["default-scheduler"].plugins_map["InterPodAffinity"]
    fragments, status = _sign(plugin, _pod({"affinity": affinity} if affinity else None, labels=labels))
    if signed:
        assert status is None and fragments == expected
    else:
        assert status.code() == Code.UNSCHEDULABLE and status.message() == "pods with InterPodAffinity are not signable"


@pytest.mark.parametrize("case", [
    # TestPodTopoSignatures: (name, pod spec, args, signable)
    ("pod w constraints", {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "test",
                                                          "whenUnsatisfiable": "DoNotSchedule"}]},
     {"defaultingType": "System"}, False),
    ("pod no constraints but default", {}, {"defaultingType": "System"}, False),
    ("pod no constraints no default", {}, {"defaultingType": "List", "defaultConstraints": []}, True),
], ids=lambda c: c[0])
def test_pod_topology_spread_sign_pod(case):
    _, spec, args, signable = case
    s = _scheduler({"name": "PodTopologySpread", "args": args})
    plugin = s.profiles["default-scheduler"].plugins_map["PodTopologySpread"]
    fragments, status = _sign(plugin, _pod(spec))
    if signable:
        assert (fragments, status) == ({}, None)
    else:
        assert status.code() == Code.UNSCHEDULABLE
    assert plugin.sign_refuses_every_pod() == (args["defaultingType"] == "System")


@pytest.mark.parametrize("case", [
    # TestImageSignature: (name, containers' images, expected names)
    ("no images", [], ()),
    ("one image", ["myimage"], ("myimage:latest",)),
    ("two images unsorted", ["zmyimage", "myimage"], ("myimage:latest", "zmyimage:latest")),
    ("duplicate images", ["myimage", "myimage:latest"], ("myimage:latest",)),
], ids=lambda c: c[0])
def test_image_locality_sign_pod(case):
    _, images, expected = case
    plugin = _scheduler(LIST_NO_DEFAULTS).profiles["default-scheduler"].plugins_map["ImageLocality"]
    pod = _pod({"containers": [{"name": f"c{i}", "image": img} for i, img in enumerate(images)]})
    assert _sign(plugin, pod) == ({signers.IMAGE_NAMES_SIGNER: expected}, None)


def test_dynamic_resources_refuses_pods_with_claims():
    plugin = _scheduler(LIST_NO_DEFAULTS).profiles["default-scheduler"].plugins_map["DynamicResources"]
    assert _sign(plugin, _pod()) == ({}, None)
    _, status = _sign(plugin, _pod({"resourceClaims": [{"name": "c", "resourceClaimName": "x"}]}))
    assert status.code() == Code.UNSCHEDULABLE and status.message() == "pods with dra resource claims are not signable"


def test_the_other_signers_sign_their_fields():
    plugins = _scheduler(LIST_NO_DEFAULTS).profiles["default-scheduler"].plugins_map
    pod = _pod({"nodeName": "n1", "nodeSelector": {"a": "b"},
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "volumes": [{"name": "v", "emptyDir": {}}]})
    assert _sign(plugins["NodeName"], pod) == ({signers.NODE_NAME_SIGNER: "n1"}, None)
    for name in ("NodeUnschedulable", "TaintToleration"):
        assert _sign(plugins[name], pod) == ({signers.TOLERATIONS_SIGNER: signers.tolerations_signer(pod)}, None)
    assert _sign(plugins["NodeAffinity"], pod) == ({signers.NODE_AFFINITY_SIGNER: None,
                                                    signers.NODE_SELECTOR_SIGNER: (("a", "b"),)}, None)
    assert _sign(plugins["NodePorts"], pod) == ({signers.HOST_PORTS_SIGNER: ()}, None)
    for name in ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"):
        assert _sign(plugins[name], pod) == ({signers.VOLUMES_SIGNER: signers.volumes_signer(pod)}, None)
    fragments, status = _sign(plugins["NodeDeclaredFeatures"], pod)
    assert status is None and list(fragments) == [signers.FEATURES_SIGNER]
    # nodeSelector: nil and empty differ (Go's JSON: null vs {})
    assert signers.node_selector_signer(_pod()) is None
    assert signers.node_selector_signer(_pod({"nodeSelector": {}})) == ()


# ------------------------------------------------------------------------------------------------
# Framework.sign_pod (TestSignatures)
# ------------------------------------------------------------------------------------------------
class _ConstSig:
    """schedule_one_test.go's constSigPlugin: fixed fragments and status, at one extension point."""

    def __init__(self, name, fragments=(), status=None):
        self._name, self.fragments, self.status = name, tuple(fragments), status

    def name(self):
        return self._name

    def sign_pod(self, pod):
        if self.status is not None and self.status.code() == Code.ERROR:
            raise RuntimeError("sign failed")
        return (self.fragments if self.status is None else None), self.status

    def pre_filter(self, state, pod, nodes):
        return None, None

    def pre_filter_extensions(self):
        return None

    def filter(self, state, pod, node_info):
        return None

    def pre_score(self, state, pod, nodes):
        return None

    def score(self, state, pod, node_info):
        return 0, None

    def score_extensions(self):
        return None


class _NoSig(_ConstSig):
    sign_pod = None  # type: ignore[assignment]


def _framework(plugins: list[tuple[_ConstSig, str]]):
    registry = in_tree_registry()
    enabled: dict[str, list] = {"pre_filter": [], "filter": [], "pre_score": [], "score": []}
    for pl, point in plugins:
        registry.register(pl.name(), lambda args, handle, pl=pl: pl)
        enabled[point].append(Plugin(pl.name(), 1))
    p = Plugins(queue_sort=PluginSet(enabled=[Plugin("PrioritySort")]), bind=PluginSet(enabled=[Plugin("DefaultBinder")]),
                **{k: PluginSet(enabled=v) for k, v in enabled.items()})
    return new_framework(registry, KubeSchedulerProfile(scheduler_name="test-scheduler", plugins=p))


@pytest.mark.parametrize("case", [
    ("no plugins", [], {}),
    ("single filter", [(("ConstSig", [("test", 16)], None), "filter")], {"test": 16}),
    ("single prefilter", [(("ConstSig", [("test", 16)], None), "pre_filter")], {"test": 16}),
    ("single score", [(("ConstSig", [("test", 16)], None), "score")], {"test": 16}),
    ("single prescore", [(("ConstSig", [("test", 16)], None), "pre_score")], {"test": 16}),
    ("two plugins", [(("ConstSig", [("test", 16)], None), "filter"), (("ConstSig2", [("test2", 17)], None), "score")],
     {"test": 16, "test2": 17}),
    ("plugin with multiple fragments", [(("ConstSig", [("test", 16), ("test2", 17)], None), "filter")],
     {"test": 16, "test2": 17}),
    ("overlapping fragments", [(("ConstSig", [("test", 16)], None), "filter"),
                               (("ConstSig2", [("test", 16)], None), "score")], {"test": 16}),
    ("unsignable plugin", [(("ConstSig", [], Status(Code.UNSCHEDULABLE)), "filter")], None),
    ("error plugin", [(("ConstSig", [], Status(Code.ERROR)), "filter")], None),
    ("no signature plugin", [(("NoSig", [], None), "filter")], None),
], ids=lambda c: c[0])
def test_framework_signatures(case):
    _, plugins, expected = case
    built = [((_NoSig if spec[0] == "NoSig" else _ConstSig)(*spec), point) for spec, point in plugins]
    fw = _framework(built)
    pod = make_pod("p", schedulerName="test-scheduler")
    got = fw.sign_pod(pod)
    if expected is None:
        assert got is None
    else:
        assert got == tuple(sorted({signers.SCHEDULER_NAME_SIGNER: "test-scheduler", **expected}.items()))
    assert fw.signatures_enabled == (not plugins or plugins[0][0][0] != "NoSig")


def test_signatures_off_with_extenders_and_with_the_gate_off():
    cfg = _config(LIST_NO_DEFAULTS)
    cfg["extenders"] = [{"urlPrefix": "http://127.0.0.1:1", "filterVerb": "filter"}]
    s = Scheduler(load_config(cfg))
    fw = s.profiles["default-scheduler"]
    assert not fw.signatures_enabled and fw.sign_pod(make_pod("p")) is None and fw.batch is None
    off = Scheduler(load_config(_config(LIST_NO_DEFAULTS)), feature_gates={"OpportunisticBatching": False})
    assert off.profiles["default-scheduler"].batch is None
    assert off.profiles["default-scheduler"].sign_pod(make_pod("p")) is None and off.queue._pod_signers is None


def test_default_profile_keeps_no_batch_state():
    # PodTopologySpread's system defaults refuse every pod: the profile signs nothing
    s = Scheduler()
    fw = s.profiles["default-scheduler"]
    assert fw.signatures_enabled and fw.batch is None and s.queue._pod_signers is None
    assert fw.sign_pod(make_pod("p")) is None


def test_pods_from_one_template_sign_equal_and_differ_by_labels():
    fw = _scheduler(LIST_NO_DEFAULTS).profiles["default-scheduler"]
    a = make_pod("a", cpu="1", labels={"app": "x"})
    b = make_pod("b", cpu="1", labels={"app": "x"})
    c = make_pod("c", cpu="1", labels={"app": "y"})
    assert fw.sign_pod(a) == fw.sign_pod(b) is not None
    assert fw.sign_pod(a) != fw.sign_pod(c)
    assert pod_manifest  # the helper builds these pods
