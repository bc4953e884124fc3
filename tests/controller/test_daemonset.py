"""DaemonSet controller: node placement, affinity replacement, tolerations, deletions."""
from __future__ import annotations

from fastsched.api import Pod
from fastsched.api.names import NameGenerator
from fastsched.controller import reconcile
from fastsched.controller.common import compute_hash
from fastsched.controller.daemonset import daemon_pod_tolerations, node_should_run_daemon_pod, target_node_name
from fastsched.testing import node_manifest

from .helpers import ListView, owned_pod, template, workload

NOW = 1_700_000_000.0
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

DS_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def ds(spec_extra=None, **metadata):
    return workload("DaemonSet", "agent", {"selector": {"matchLabels": {"app": "agent"}},
                                           "template": template({"app": "agent"}, spec=spec_extra)}, **metadata)


def nodes():
    return [
        node_manifest("plain"),
        node_manifest("gpu", labels={"gpu": "true"}),
        node_manifest("tainted", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        node_manifest("evicting", taints=[{"key": "dedicated", "value": "x", "effect": "NoExecute"}]),
        node_manifest("soft", taints=[{"key": "spot", "effect": "PreferNoSchedule"}]),
        node_manifest("cordoned", unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable",
                                                               "effect": "NoSchedule"}]),
    ]


def created_nodes(changes):
    return [target_node_name(Pod.from_manifest(m)) for m in changes.create_pods]


def test_one_pod_per_eligible_node_with_labels_and_tolerations():
    d = ds()
    changes = reconcile(d, ListView(nodes=nodes()), NameGenerator(5), NOW)
    assert created_nodes(changes) == ["plain", "gpu", "soft", "cordoned"]
    pod_template_hash = compute_hash(d.template, None)
    for manifest, node in zip(changes.create_pods, ["plain", "gpu", "soft", "cordoned"]):
        meta = manifest["metadata"]
        assert meta["generateName"] == "agent-"
        assert meta["name"].startswith("agent-") and len(meta["name"]) == len("agent-") + 5
        assert meta["labels"] == {"app": "agent", "pod-template-generation": "1",
                                  "controller-revision-hash": pod_template_hash}
        assert meta["ownerReferences"][0]["kind"] == "DaemonSet"
        spec = manifest["spec"]
        assert "nodeName" not in spec
        assert spec["affinity"] == {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        assert spec["tolerations"] == DS_TOLERATIONS
    names = [m["metadata"]["name"] for m in changes.create_pods]
    assert names == [m["metadata"]["name"] for m in reconcile(d, ListView(nodes=nodes()), NameGenerator(5),
                                                              NOW).create_pods]


def test_node_selector_affinity_and_tolerations_of_the_template():
    spec = {
        "nodeSelector": {"gpu": "true"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
    }
    assert created_nodes(reconcile(ds(spec), ListView(nodes=nodes()), NameGenerator(0), NOW)) == ["gpu"]
    affinity = {"nodeAffinity": {
        REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}]},
        PREFERRED: [{"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}],
    }}
    spec = {"affinity": affinity, "tolerations": [{"operator": "Exists"}]}
    changes = reconcile(ds(spec), ListView(nodes=nodes()), NameGenerator(0), NOW)
    assert created_nodes(changes) == ["plain", "tainted", "evicting", "soft", "cordoned"]
    node_affinity = changes.create_pods[1]["spec"]["affinity"]["nodeAffinity"]
    assert node_affinity[REQUIRED] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["tainted"]}]}]}
    assert node_affinity[PREFERRED] == affinity["nodeAffinity"][PREFERRED]  # preferred terms kept
    assert changes.create_pods[1]["spec"]["tolerations"][0] == {"operator": "Exists"}


def test_tolerations_added_unless_present_and_network_unavailable_for_host_network():
    spec = {"hostNetwork": True, "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    ]}
    tolerations = daemon_pod_tolerations(spec)
    assert tolerations[0] == DS_TOLERATIONS[0]  # same toleration with seconds: replaced in place
    assert tolerations[1] == DS_TOLERATIONS[5]
    assert [t["key"] for t in tolerations[2:]] == [
        "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable"]


def test_template_node_name_restricts_to_that_node():
    changes = reconcile(ds({"nodeName": "gpu"}), ListView(nodes=nodes()), NameGenerator(0), NOW)
    assert created_nodes(changes) == ["gpu"]


def test_should_run_and_should_continue():
    d = ds()
    from fastsched.api import Node
    tainted = Node.from_manifest(node_manifest("t", taints=[{"key": "k", "effect": "NoSchedule"}]))
    evicting = Node.from_manifest(node_manifest("e", taints=[{"key": "k", "effect": "NoExecute"}]))
    assert node_should_run_daemon_pod(tainted, d) == (False, True)
    assert node_should_run_daemon_pod(evicting, d) == (False, False)
    assert node_should_run_daemon_pod(Node.from_manifest(node_manifest("ok")), d) == (True, True)


def test_existing_pods_and_deletions():
    d = ds()
    labels = {"app": "agent"}
    pods = [
        owned_pod("on-plain", d, labels, phase="Running", node="plain", created="2024-01-01T00:00:00Z"),
        owned_pod("dup-plain", d, labels, phase="Running", node="plain", created="2024-01-02T00:00:00Z"),
        owned_pod("failed-gpu", d, labels, phase="Failed", node="gpu"),
        owned_pod("on-evicting", d, labels, phase="Running", node="evicting"),
        owned_pod("on-tainted", d, labels, phase="Running", node="tainted"),
    ]
    gone = Pod.from_manifest({**owned_pod("pending-gone", d, labels).manifest, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}}}})
    changes = reconcile(d, ListView(pods + [gone], nodes=nodes()), NameGenerator(0), NOW)
    assert sorted(p.name for p in changes.delete_pods) == ["dup-plain", "failed-gpu", "on-evicting", "pending-gone"]
    # gpu keeps no pod this pass (its failed pod is deleted first); tainted keeps its pod (NoSchedule only)
    assert created_nodes(changes) == ["soft", "cordoned"]


def test_idempotent_after_apply_and_new_node_gets_a_pod():
    d = ds()
    view = ListView(nodes=nodes(), objects=[d])
    view.apply(reconcile(d, view, NameGenerator(0), NOW))
    assert reconcile(d, view, NameGenerator(0), NOW).is_empty()
    from fastsched.api import Node
    view.node_list.append(Node.from_manifest(node_manifest("late")))
    assert created_nodes(reconcile(d, view, NameGenerator(0), NOW)) == ["late"]


def test_node_that_no_longer_qualifies_loses_its_pod():
    d = ds({"nodeSelector": {"gpu": "true"}})
    pod = owned_pod("agent-x", d, {"app": "agent"}, phase="Running", node="plain")
    changes = reconcile(d, ListView([pod], nodes=nodes()), NameGenerator(0), NOW)
    assert [p.name for p in changes.delete_pods] == ["agent-x"]
    assert created_nodes(changes) == ["gpu"]


def test_template_generation_annotation():
    d = ds(annotations={"deprecated.daemonset.template.generation": "4"})
    labels = reconcile(d, ListView(nodes=nodes()[:1]), NameGenerator(0), NOW).create_pods[0]["metadata"]["labels"]
    assert labels["pod-template-generation"] == "4"


def test_orphan_adopted_on_its_node():
    d = ds()
    orphan = owned_pod("loose", None, {"app": "agent"}, phase="Running", node="plain")
    changes = reconcile(d, ListView([orphan], nodes=nodes()[:2]), NameGenerator(0), NOW)
    assert [p.name for p in changes.adopt_pods] == ["loose"]
    assert created_nodes(changes) == ["gpu"]
