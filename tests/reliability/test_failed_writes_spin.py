"""run() without ``until`` ends when pods' failing attempts write to the cluster: a PreBind plugin
that creates an object and then fails (or DynamicResources' PreBind, whose special claim for
extended resources a cluster hands back under another controller, and which then fails to find
it). Every such attempt commits a change, so the pod never failed twice on one committed cluster
and the loop retried it forever, advancing the virtual clock by its backoff (a test comparing
claims hung instead of failing). Now the failed attempts' writes settle a pod after
``own_write_retries`` such failures in a row; a pod that needs a few of them still schedules.

The watchdog: every run is bounded (``max_attempts``) and the test asserts it ended short of the
bound, so a future spin fails here instead of hanging."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.scheduler.result import ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import config_enabling, make_node, make_pod

from ..scheduler.test_loop_termination import add_gangs

GUARD_ATTEMPTS = 20_000


class _Writer:
    """A PreBind plugin whose first ``fails`` calls per pod (None: every call) create ``writes``
    ResourceClaims with generated names and return an Error."""

    def __init__(self, fails: int | None, writes: int):
        self.fails, self.writes = fails, writes
        self.client = None
        self.calls: dict[str, int] = {}

    def name(self):
        return "Writer"

    def pre_bind(self, state, pod, node_name):
        n = self.calls[pod.uid] = self.calls.get(pod.uid, 0) + 1
        if self.fails is not None and n > self.fails:
            return None
        for _ in range(self.writes):
            self.client.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                    "metadata": {"generateName": f"{pod.name}-leak-", "namespace": pod.namespace},
                                    "spec": {}})
        return Status(Code.ERROR, "etcd is down")


def _run(plugin: _Writer, n_pods: int, nodes: int = 4):
    config = config_enabling("Writer", "preBind")
    s = Scheduler(config, registry=Registry({"Writer": lambda args, handle: plugin}))
    plugin.client = s.cluster
    s.add_nodes([make_node(f"n{i}", cpu="64", pods="200") for i in range(nodes)])
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
    results = s.run(max_attempts=GUARD_ATTEMPTS)
    assert sum(r.attempts for r in results) < GUARD_ATTEMPTS, "run() did not end by itself"
    assert len(results) == n_pods and {r.pod.name for r in results} == {f"p{i}" for i in range(n_pods)}
    return s, results


@pytest.mark.parametrize("n_pods", [1, 60])
def test_a_pre_bind_plugin_writing_then_failing_does_not_make_run_spin(n_pods):
    plugin = _Writer(None, 1)
    s, results = _run(plugin, n_pods)
    assert {r.status for r in results} == {ERROR}
    assert all(r.message == 'running PreBind plugin "Writer": etcd is down' for r in results)
    limit = s.own_write_retries
    assert all(limit <= plugin.calls[r.pod.uid] <= limit + 2 for r in results), sorted(plugin.calls.values())
    assert s.cache.pod_count() == 0  # nobody bound, nobody left assumed
    # run(until=T) still retries them as upstream does, after backoff, until T
    before = dict(plugin.calls)
    s.run(until=s.clock.now() + 60)
    assert all(plugin.calls[uid] > before[uid] for uid in before)


@pytest.mark.parametrize("n_pods", [1, 60])
def test_pods_whose_failed_attempts_write_a_few_times_are_scheduled(n_pods):
    plugin = _Writer(3, 2)
    _, results = _run(plugin, n_pods)
    assert {r.status for r in results} == {SCHEDULED}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_pods=st.integers(1, 60), writes=st.integers(0, 3), fails=st.one_of(st.none(), st.integers(0, 12)),
       nodes=st.integers(1, 5))
def test_run_ends_whatever_failing_attempts_write(n_pods, writes, fails, nodes):
    """run() ends short of the guard; every pod has one result; a pod failing fewer times than
    ``own_write_retries`` with writes (than two without: an Error twice on one cluster settles)
    is scheduled (the nodes have room for all), one failing every time is an Error (the plugin's
    message) and not bound."""
    plugin = _Writer(fails, writes)
    s, results = _run(plugin, n_pods, nodes)
    if fails is not None and fails < (s.own_write_retries if writes else 2):
        assert {r.status for r in results} == {SCHEDULED}
    elif fails is None:
        assert {r.status for r in results} == {ERROR}
        assert s.cache.pod_count() == 0
    bound = {r.pod.uid for r in results if r.status == SCHEDULED}
    assert s.cache.pod_count() == len(bound)


def test_a_special_claim_create_answering_no_claim_does_not_make_run_spin(monkeypatch):
    """A cluster that stores DynamicResources' special claim for extended resources but answers
    its create with no object (the planted mutant that hung test_prebind_creates_the_claim_its_
    manifest_decodes_to stored it without the pod as its controller, so that PreBind's lookup after
    the create missed it; PreBind now goes on with the create's answer, as upstream): PreBind fails
    after creating it, leaving it behind, on every attempt. run() ends, no pod is lost, none is
    bound, no claim is left."""
    from fastsched.api.resource import ResourceClaim
    from fastsched.scheduler import cluster as cluster_module

    real_add = cluster_module.Cluster.add_object

    def add_without_answer(self, obj):
        stored = real_add(self, obj)
        if isinstance(obj, ResourceClaim) and obj.generate_name.endswith("-extended-resources-"):
            return None
        return stored

    monkeypatch.setattr(cluster_module.Cluster, "add_object", add_without_answer)
    ern = "example.com/gpu"
    s = Scheduler()
    s.add_nodes([make_node(f"n{i}", cpu="64", pods="200") for i in range(3)])
    s.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                  "spec": {"extendedResourceName": ern}})
    for i in range(3):
        s.add_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"n{i}-slice"},
                      "spec": {"driver": "gpu.example.com", "nodeName": f"n{i}",
                               "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                               "devices": [{"name": f"d{k}"} for k in range(30)]}})
    n_pods = 50
    s.add_pods([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{k}", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                     "requests": {"cpu": "100m", ern: "1"}, "limits": {ern: "1"}}}]}} for k in range(n_pods)])
    results = s.run(max_attempts=GUARD_ATTEMPTS)
    assert sum(r.attempts for r in results) < GUARD_ATTEMPTS, "run() did not end by itself"
    # (each failed PreBind leaves its claim: the next cycle rejects the pod for it and
    # PostFilter deletes it, alternately, until the pod's attempts end)
    assert len(results) == n_pods and {r.status for r in results} == {UNSCHEDULABLE}
    assert all("cannot schedule extended resource claim" in r.message for r in results)
    assert s.cache.pod_count() == 0 and s.list_objects("ResourceClaim") == []


def test_gang_members_whose_binding_writes_then_fails_do_not_make_run_spin():
    """The same with pod groups (GenericWorkload): a group whose cycle succeeds is requeued
    without backoff, so its members' failing PreBind (which writes) spun without even advancing the
    clock. 20 gangs of 3: run() ends, every member an Error, none bound."""
    gates = {"GenericWorkload": True}
    plugin = _Writer(None, 1)
    s = Scheduler(config_enabling("Writer", "preBind", feature_gates=gates),
                  registry=Registry({"Writer": lambda args, handle: plugin}), feature_gates=gates)
    plugin.client = s.cluster
    s.add_nodes([make_node(f"n{i}", cpu="64", pods="200") for i in range(3)])
    add_gangs(s, 20)
    results = s.run(max_attempts=2_000)
    assert sum(r.attempts for r in results) < 2_000 * 3, "run() did not end by itself"
    assert len(results) == 60 and {r.status for r in results} == {ERROR}
    assert s.cache.pod_count() == 0
