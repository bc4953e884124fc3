"""Pods as a cluster dump hands them over: each mounts the ServiceAccount admission's token volume,
named ``kube-api-access-<5 random characters>`` per pod, in every container. No plugin's plan reads
a container's mounts but NodeDeclaredFeatures' inference (``bindMountOptions``), so the compiled
cycle shares one plan between pods whose containers differ only in them (``column_reads_mounts``):
whole runs decide as the plugin-call path and as pods decoded each on its own, the plan is shared
(compiled once), and a plugin that reads mounts keeps them in the key."""
from __future__ import annotations

import copy
import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.api import Container, Node
from fastsched.api import load as load_module
from fastsched.api.templates import PodTemplates
from fastsched.runtime.compiled_cycle import CompiledCycle
from fastsched.testing import add_service_account_token, make_node, make_pod, pod_manifest

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class _NoTemplates(PodTemplates):
    """Every pod decoded on its own (no template cache)."""

    def key(self, document):
        return None


def _cluster(rng: random.Random) -> list:
    return [make_node(f"n{i}", cpu=str(rng.choice((2, 4, 8))), memory=f"{rng.choice((4, 8, 16))}Gi", pods="110",
                      labels={"topology.kubernetes.io/zone": f"z{i % 3}", "kubernetes.io/hostname": f"n{i}"})
            for i in range(12)]


def _dump(rng: random.Random, count: int) -> list[dict]:
    """Pending pods one manifest each, with their token: runs of one Deployment's spec (one
    request, image, init container or not) broken by others, a pod status each."""
    out = []
    cpu, image, init = "100m", "web:1", False
    for i in range(count):
        if rng.random() < 0.15:
            cpu, image = rng.choice(("100m", "300m", "1")), rng.choice(("web:1", "web:2", "db:1"))
            init = rng.random() < 0.3
        m = pod_manifest(f"p{i}", cpu=cpu, memory="256Mi", labels={"app": image.split(":")[0]})
        m["spec"]["containers"][0]["image"] = image
        m["spec"]["containers"].append({"name": "sidecar", "image": "envoy:1",
                                        "volumeMounts": [{"mountPath": "/etc/envoy", "name": "config"}]})
        m["spec"]["volumes"] = [{"name": "config", "configMap": {"name": "envoy"}}]
        if init:
            m["spec"]["initContainers"] = [{"name": "init", "image": "busybox:1"}]
        m["metadata"]["uid"] = f"00000000-0000-4000-8000-{i:012d}"
        m["metadata"]["creationTimestamp"] = f"2026-11-02T09:{i // 60 % 60:02d}:{i % 60:02d}Z"
        m["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        out.append(add_service_account_token(m, rng))
    return out


def _run(nodes, manifests, seed, *, compiled: bool, templates: bool, monkeypatch):
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", PodTemplates() if templates else _NoTemplates())
    s = Scheduler(load_config(V1), seed=seed)
    s.use_compiled_cycle = compiled
    s.add_nodes(nodes)
    s.add_pods(copy.deepcopy(manifests))
    return s, [(r.pod.key, r.status, r.node_name, r.message) for r in s.run()]


def _counting_compiles(monkeypatch) -> list:
    compiled: list = []
    real = CompiledCycle._compile

    def counting(self, pod, spec, snapshot):
        compiled.append(pod.key)
        return real(self, pod, spec, snapshot)

    monkeypatch.setattr(CompiledCycle, "_compile", counting)
    return compiled


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_token_pods_decide_as_the_plugin_call_path_and_as_pods_decoded_afresh(monkeypatch, seed):
    rng = random.Random(seed)
    nodes = _cluster(rng)
    manifests = _dump(rng, 220)  # (more than the nodes hold: failures, their diagnosis, included)
    compiled = _counting_compiles(monkeypatch)
    s, fast = _run(nodes, manifests, seed, compiled=True, templates=True, monkeypatch=monkeypatch)
    plans = len(compiled)
    _, slow = _run(nodes, manifests, seed, compiled=False, templates=True, monkeypatch=monkeypatch)
    _, afresh = _run(nodes, manifests, seed, compiled=True, templates=False, monkeypatch=monkeypatch)
    assert fast == slow == afresh
    assert sum(r[1] == "Scheduled" for r in fast) >= 100 and any(r[1] != "Scheduled" for r in fast)
    (fw,) = s.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 100  # the compiled side did run the kernel
    # a plan per distinct spec and node set (the nodes fill: the node-set version does not change
    # when pods are placed), not one per pod
    assert plans <= 40, plans


@pytest.mark.parametrize("templates", [True, False], ids=["stamped", "decoded-afresh"])
def test_pods_differing_only_in_their_token_share_one_plan(monkeypatch, templates):
    """A Deployment's pods, each with its own token name: one plan compiled for all of them (the
    speed of ``run()`` on a dump: a plan each was ~500 us a pod)."""
    rng = random.Random(7)
    base = pod_manifest("p", cpu="100m", memory="128Mi", labels={"app": "web"})
    manifests = []
    for i in range(60):
        m = copy.deepcopy(base)
        m["metadata"]["name"] = f"web-{i}"
        manifests.append(add_service_account_token(m, rng))
    assert len({m["spec"]["volumes"][0]["name"] for m in manifests}) == 60
    compiled = _counting_compiles(monkeypatch)
    s, results = _run([make_node(f"n{i}", cpu="16", memory="64Gi") for i in range(8)], manifests, 0,
                      compiled=True, templates=templates, monkeypatch=monkeypatch)
    assert all(r[1] == "Scheduled" for r in results)
    (fw,) = s.profiles.values()
    assert fw.compiled_cycle.fused_cycles == 60 and len(compiled) == 1


def _ndf_nodes() -> list:
    """Four nodes, two of them declaring VolumeBindMountOptions."""
    out = []
    for i in range(4):
        node = make_node(f"n{i}", cpu="8", memory="32Gi")
        if i % 2:
            node = Node(name=node.name, labels=node.labels, allocatable=node.allocatable, capacity=node.capacity,
                        declared_features=("VolumeBindMountOptions",))
        out.append(node)
    return out


def test_a_plugin_reading_mounts_keeps_them_in_the_key():
    """NodeDeclaredFeatures infers VolumeBindMountOptions from a mount's ``bindMountOptions`` (a pod
    built as an object: the decoder drops the field with the gate off). Pods whose containers hold
    the very field objects of the previous pod's but other mounts (the shortcut's case) get their
    own plan when the mounts change what a plugin infers, and each pod lands where the plugin-call
    path puts it."""
    template = make_pod("t", requests={"cpu": "1"})
    (c,) = template.containers

    def pod(i: int, bind: bool):
        mount = {"name": f"kube-api-access-{i:05d}", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
        if bind:
            mount["bindMountOptions"] = ["rbind"]
        container = c.replace(volume_mounts=(mount,))
        assert all(getattr(container, f) is getattr(c, f) for f in ("name", "image", "requests", "limits"))
        return template.replace(name=f"p{i}", uid=f"p{i}", containers=(container,))

    pods = [pod(i, bind=i % 3 == 2) for i in range(12)]
    outcomes = []
    for compiled in (True, False):
        s = Scheduler(load_config(V1), seed=3)
        s.use_compiled_cycle = compiled
        s.add_nodes(_ndf_nodes())
        s.add_pods(pods)
        outcomes.append([(r.pod.name, r.status, r.node_name) for r in s.run()])
    assert outcomes[0] == outcomes[1]
    placed = dict((name, node) for name, _, node in outcomes[0])
    assert all(placed[f"p{i}"] in ("n1", "n3") for i in range(12) if i % 3 == 2)
    assert any(placed[f"p{i}"] in ("n0", "n2") for i in range(12) if i % 3 != 2)


def test_containers_differing_only_in_mounts_are_told_apart_from_other_changes():
    """The shortcut's test (``_differ_in_mounts_only``): the same objects but the mounts; a
    container with any other field object of its own (a request, an image), or one more
    container, is a change."""
    from fastsched.runtime.compiled_cycle import _differ_in_mounts_only

    c = Container(name="c", image="i", requests={"cpu": 1}, volume_mounts=({"name": "a"},))
    mounts_only = c.replace(volume_mounts=({"name": "b"},))
    assert _differ_in_mounts_only((c,), (mounts_only,)) and _differ_in_mounts_only((c,), (c,))
    assert not _differ_in_mounts_only((c,), (c.replace(volume_mounts=({"name": "b"},), image="j"),))
    assert not _differ_in_mounts_only((c,), (c.replace(requests={"cpu": 1}),))  # equal, not the same object
    assert not _differ_in_mounts_only((c,), (c, c))


def test_a_plugin_not_stating_column_reads_mounts_is_taken_to_read_them():
    """An out-of-tree Filter whose static verdicts depend on the containers' mounts, stating
    ``column_reads`` but not ``column_reads_mounts``: the mounts stay in the plan key (pods whose
    mounts differ get plans of their own), and every pod lands where the plugin-call path puts it."""
    import numpy as np

    from fastsched.framework import Code, Status
    from fastsched.framework.columns import FILTER_ON_NODES
    from fastsched.framework.vectorized import FilterVerdicts
    from fastsched.runtime import Registry

    def wants_odd(pod) -> bool:
        return any(m["name"].endswith(("1", "3", "5", "7", "9")) for c in pod.containers for m in c.volume_mounts)

    class MountParity:
        """Sends a pod whose token name ends in an odd digit to the odd nodes, others to the even."""

        column_reads = ("containers",)

        def name(self):
            return "MountParity"

        def column_form(self, pod, table):
            return FILTER_ON_NODES

        def filter(self, state, pod, node_info):
            odd = int(node_info.node().name[1:]) % 2 == 1
            return None if odd == wants_odd(pod) else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "parity")

        def filter_vectorized(self, state, pod, nodes):
            odd = np.array([int(n[1:]) % 2 == 1 for n in nodes.names])
            ok = odd == wants_odd(pod)
            return FilterVerdicts(np.where(ok, 0, int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)),
                                  np.where(ok, -1, 0), [("parity",)])

    registry = Registry({"MountParity": lambda args, handle: MountParity()})
    cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler",
                                            "plugins": {"filter": {"enabled": [{"name": "MountParity"}]}}}]},
                      registry_names=["MountParity"])
    rng = random.Random(5)
    manifests = []
    for i in range(40):
        m = pod_manifest(f"p{i}", cpu="100m", memory="64Mi")
        add_service_account_token(m, rng)
        manifests.append(m)
    outcomes = []
    for compiled in (True, False):
        s = Scheduler(cfg, registry=registry, seed=2)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="32Gi") for i in range(6)])
        s.add_pods(copy.deepcopy(manifests))
        outcomes.append([(r.pod.name, r.status, r.node_name) for r in s.run()])
        if compiled:
            (fw,) = s.profiles.values()
            assert fw.compiled_cycle.fused_cycles == 40
    assert outcomes[0] == outcomes[1]
    parities = {int(node[1:]) % 2 for _, _, node in outcomes[0]}
    assert parities == {0, 1}  # (pods of both parities: each mount name decided where its pod went)
