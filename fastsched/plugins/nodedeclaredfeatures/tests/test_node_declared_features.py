"""NodeDeclaredFeatures: upstream's nodedeclaredfeatures_test.go tables (v1.37.2), the inference of
k8s.io/component-helpers/nodedeclaredfeatures, and batch == per-node."""
from __future__ import annotations

import random

import pytest

from fastsched.api import Container, Node, Pod
from fastsched.framework import ActionType, Code, CycleState, EventResource, NodeInfo, QueueingHint
from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.nodedeclaredfeatures import (DEFAULT_FRAMEWORK, ERR_REASON_UNSATISFIED_REQUIREMENTS, NAME,
                                                    PRE_FILTER_STATE_KEY, Feature, Framework, NodeDeclaredFeatures,
                                                    PreFilterState, new)
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, make_node

UNRESOLVABLE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_UNSATISFIED_REQUIREMENTS])


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


def _mock(name, infer, max_version=None):
    """ndftesting.MockFeature with a fixed InferForScheduling."""
    return Feature(name, lambda pod, _v=infer: _v, max_version)


def _node(name="node-1", features=()):
    node = make_node(name)
    return node if not features else Node(name=node.name, labels=node.labels, allocatable=node.allocatable,
                                          capacity=node.capacity, declared_features=tuple(features))


# -- TestPreFilter ----------------------------------------------------------------------------------
F1, F2 = "TestFeature1", "TestFeature2"


@pytest.mark.parametrize("name, enabled, version, features, want_status, want_reqs", [
    ("plugin disabled", False, (1, 35, 0), [_mock(F1, True), _mock(F2, False)], Code.SKIP, None),
    ("Pod with feature requirements", True, (1, 35, 0), [_mock(F1, True), _mock(F2, False)], None, [F1]),
    ("Pod with multiple feature requirements", True, (1, 35, 0),
     [_mock(F1, True, (1, 38, 0)), _mock(F2, True, (1, 38, 0))], None, [F1, F2]),
    ("Pod with no requirements", True, (1, 35, 0), [_mock(F1, False), _mock(F2, False)], Code.SKIP, None),
    ("Feature not required, version > MaxVersion", True, (1, 34, 0),
     [_mock(F1, True, (1, 33, 0)), _mock(F2, False)], Code.SKIP, None),
])
def test_pre_filter(name, enabled, version, features, want_status, want_reqs):
    fw = Framework(features)
    plugin = NodeDeclaredFeatures(framework=fw, version=version, enabled=enabled)
    state = CycleState()
    result, status = plugin.pre_filter(state, Pod(name="test-pod"), None)
    assert result is None
    assert (None if status is None else status.code()) == want_status
    if want_reqs is None:
        with pytest.raises(KeyError):
            state.read(PRE_FILTER_STATE_KEY)
    else:
        assert state.read(PRE_FILTER_STATE_KEY).reqs == fw.map_sorted(want_reqs)


# -- TestFilter -------------------------------------------------------------------------------------
FA, FB, FC = "FeatureA", "FeatureB", "FeatureC"
MOCK = Framework([_mock(FA, False), _mock(FB, False), _mock(FC, False)])


@pytest.mark.parametrize("name, enabled, node_features, reqs, want", [
    ("plugin disabled", False, [FA, FB], None, None),
    ("Node matches requirements", True, [FA, FB], [FA], None),
    ("Node does not match requirements", True, [FB], [FA], UNRESOLVABLE),
    # upstream leaves pluginEnabled unset here: the zero value, false, so the plugin passes the node
    ("Node with multiple features, pod requires subset", False, [FA, FB, FC], [FA, FC], None),
    ("Node has no declared features", True, [], [FA], UNRESOLVABLE),
    ("Node with some but not all required features", True, [FA], [FA, FB], UNRESOLVABLE),
    ("Error getting pre-filter state", True, [], None,
     (Code.ERROR, ['error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'])),
])
def test_filter(name, enabled, node_features, reqs, want):
    plugin = NodeDeclaredFeatures(framework=MOCK, version=(1, 35, 0), enabled=enabled)
    state = CycleState()
    if reqs is not None:
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(MOCK.map_sorted(reqs)))
    node = _node(features=node_features)
    pod = Pod(name="test-pod")
    assert _verdict(plugin.filter(state, pod, NodeInfo(node))) == want
    snapshot = build_snapshot([node])
    assert _verdict(plugin.filter_vectorized(state, pod, snapshot.batch()).status(0)) == want


# Upstream TestEnqueueExtensionsNodeUpdate (v1.37.2): (name, old node, new node, hint); the plugin
# built with no features and version 1.35.0, as upstream's.
NODE_UPDATE_ROWS = [
    ("Node Add with feature", None, _node(features=["FeatureA"]), QueueingHint.QUEUE),
    ("Node Update (Features Added)", _node(), _node(features=["FeatureA"]), QueueingHint.QUEUE),
    ("Node Update (Features Unchanged)", _node(features=["FeatureA"]), _node(features=["FeatureA"]),
     QueueingHint.QUEUE_SKIP),
]


@pytest.mark.parametrize("name, old, new_, want", NODE_UPDATE_ROWS, ids=[r[0] for r in NODE_UPDATE_ROWS])
def test_is_schedulable_after_node_change(name, old, new_, want):
    plugin = NodeDeclaredFeatures(framework=Framework([]), version=(1, 35, 0))
    assert plugin.is_schedulable_after_node_change(Pod(name="test-pod"), old, new_) == (want, None)


class _Sequence:
    """A MockFeature whose InferForScheduling answers from a script (upstream's call counter)."""

    def __init__(self, *answers):
        self.answers = list(answers)

    def __call__(self, pod):
        return self.answers.pop(0)


_TARGET = Pod(name="test-pod", uid="123")
_TARGET_FOO = Pod(name="test-pod", uid="123", labels={"foo": "bar"})
# Upstream TestIsSchedulableAfterTargetPodUpdate (v1.37.2): (name, InferForScheduling script,
# component version, old pod, new pod, hint, error).
TARGET_POD_UPDATE_ROWS = [
    ("Pod Update adds requirement", _Sequence(False, True), (1, 35, 0), _TARGET, _TARGET_FOO,
     QueueingHint.QUEUE, None),
    ("Pod Update removes requirement", _Sequence(True, False), (1, 35, 0), _TARGET_FOO, _TARGET,
     QueueingHint.QUEUE, None),
    ("Pod Update with no change in requirements", lambda pod: False, (1, 35, 0), _TARGET, _TARGET,
     QueueingHint.QUEUE_SKIP, None),
    ("Infer returns error", lambda pod: True, None, _TARGET, _TARGET_FOO,
     QueueingHint.QUEUE, "target version cannot be nil"),
]


@pytest.mark.parametrize("name, infer, version, old, new_pod, want, err", TARGET_POD_UPDATE_ROWS,
                         ids=[r[0] for r in TARGET_POD_UPDATE_ROWS])
def test_is_schedulable_after_target_pod_update(name, infer, version, old, new_pod, want, err):
    plugin = NodeDeclaredFeatures(framework=Framework([Feature("TestFeature", infer)]), version=version)
    hint, got_err = plugin.is_schedulable_after_target_pod_update(_TARGET, old, new_pod)
    assert hint == want
    assert (None if got_err is None else str(got_err)) == err


# Upstream TestEventsToRegister (v1.37.2): (name, enabled, number of events).
@pytest.mark.parametrize("name, enabled, n", [("plugin disabled", False, 0), ("plugin enabled", True, 2)],
                         ids=["plugin disabled", "plugin enabled"])
def test_events_to_register(name, enabled, n):
    events = NodeDeclaredFeatures(enabled=enabled).events_to_register()
    assert len(events) == n
    if enabled:
        assert [(e.event.resource, e.event.action_type) for e in events] == [
            (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
            (EventResource.TARGET_POD, ActionType.UPDATE)]


def test_deferred_resize_skipped():
    pod = Pod(name="p", uid="p", conditions=({"type": "PodResizePending", "status": "True", "reason": "Deferred"},))
    plugin = NodeDeclaredFeatures(enabled=True, enable_in_place_pod_vertical_scaling_scheduler_preemption=True)
    result, status = plugin.pre_filter(None, pod, None)
    assert result is None and status.code() == Code.SKIP
    assert plugin.filter(None, pod, NodeInfo(_node())) is None


# -- the default framework: component-helpers' features and their inference ------------------------
def _pod(**spec):
    containers = spec.pop("containers", [{"name": "c", "image": "i"}])
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": containers, **spec}}
    return Pod.from_manifest(manifest, validate=False)


def _bind_pod(where="containers", **spec):
    """A pod with a bindMountOptions mount in ``where``: built as an object, since the API server's
    create strategy drops the field while VolumeBindMountOptions (alpha) is off (see
    test_decoding_drops_bind_mount_options)."""
    c = Container(name="c", image="i", volume_mounts=({"name": "v", "mountPath": "/v", "bindMountOptions": ["x"]},))
    base = _pod(**spec)
    return base.replace(**{where: (c,) if where != "containers" else (c,)})


RESTART_ALL = [{"name": "c", "image": "i", "restartPolicy": "Never", "restartPolicyRules": [
    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]
BIND_OPTS = [{"name": "c", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["x"]}]}]


@pytest.mark.parametrize("pod, want", [
    (_pod(), []),
    (_pod(containers=RESTART_ALL), ["RestartAllContainersOnContainerExits"]),
    (_pod(initContainers=RESTART_ALL), ["RestartAllContainersOnContainerExits"]),
    (_pod(containers=[{"name": "c", "image": "i", "restartPolicyRules": [{"action": "Restart"}]}]), []),
    (_pod(hostNetwork=True, hostUsers=False), ["UserNamespacesHostNetworkSupport"]),
    (_pod(hostNetwork=True, hostUsers=True), []),
    (_pod(hostNetwork=True), []),
    (_pod(hostUsers=False), []),
    (_bind_pod("containers"), ["VolumeBindMountOptions"]),
    (_bind_pod("init_containers"), ["VolumeBindMountOptions"]),
    (_bind_pod("ephemeral_containers"), ["VolumeBindMountOptions"]),
    (_pod(containers=BIND_OPTS), []),   # dropped on create (VolumeBindMountOptions off)
    (_pod(containers=[{"name": "c", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]), []),
    (_pod(containers=RESTART_ALL + BIND_OPTS[:0], hostNetwork=True, hostUsers=False),
     ["RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"]),
])
def test_default_inference(pod, want):
    assert DEFAULT_FRAMEWORK.unmap(DEFAULT_FRAMEWORK.infer_for_pod_scheduling(pod)) == want


def test_try_map_walks_sorted_lists_like_upstream():
    fw = DEFAULT_FRAMEWORK
    assert fw.unmap(fw.try_map(["Unknown", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"])) == [
        "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"]
    # out of order: TryMap's merge walk passes the later name by (upstream behaves the same)
    assert fw.unmap(fw.try_map(["VolumeBindMountOptions", "RestartAllContainersOnContainerExits"])) == [
        "VolumeBindMountOptions"]


def test_factory_and_node_declared_features_in_the_default_profile():
    from fastsched.scheduler import Scheduler

    assert new(None, None).enabled
    fw = Scheduler().profiles["default-scheduler"]
    assert [p.name() for p in fw.filter_plugins][-1] == NAME and fw.plugin(NAME).enabled


# -- batch == per-node, through the framework -------------------------------------------------------
FEATURES = ("RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions")


@pytest.mark.parametrize("seed", range(6))
def test_batch_equals_per_node(seed):
    rng = random.Random(seed)
    nodes = [_node(f"n{i}", sorted(rng.sample(FEATURES + ("Other",), rng.randint(0, 3)))) for i in range(60)]
    snapshot = build_snapshot(nodes)
    fw = single_plugin_framework(NAME)
    pods = [_pod(), _pod(containers=RESTART_ALL), _pod(hostNetwork=True, hostUsers=False),
            _bind_pod("containers", hostNetwork=True, hostUsers=False), _bind_pod("ephemeral_containers")]
    for pod in pods:
        reqs = set(DEFAULT_FRAMEWORK.unmap(DEFAULT_FRAMEWORK.infer_for_pod_scheduling(pod)))
        summary = assert_paths_equivalent(fw, snapshot, pod)
        assert summary["feasible"] == sum(reqs <= set(n.declared_features) for n in nodes)


def test_check_plugin_with_declared_features():
    # fastsched.testing.check_plugin: the plugin's own methods, vectorized == per node, and the
    # fused cycle (column form) placing the pods as the plugin calls do
    from fastsched.testing import CheckScenario, check_plugin

    def scenario(seed):
        rng = random.Random(seed)
        nodes = [_node(f"n{i}", sorted(rng.sample(FEATURES, rng.randint(0, 3)))) for i in range(30)]
        pods = []
        for i in range(12):
            spec = rng.choice([{}, {"containers": RESTART_ALL}, {"hostNetwork": True, "hostUsers": False}, None])
            pod = _bind_pod() if spec is None else _pod(**spec)
            pods.append(pod.replace(name=f"p{i}", uid=f"p{i}"))
        return CheckScenario(nodes, [], pods, [])

    summary = check_plugin(new, scenario=scenario)
    assert summary["filtered"] > 0 and summary["fused_cycles"] > 0


def test_decoding_drops_bind_mount_options():
    # pkg/api/pod/util.go: dropDisabledFields clears bindMountOptions while VolumeBindMountOptions
    # (alpha, off at v1.37.2) is off; the oracle (the API server's PrepareForCreate) does the same
    pod = _pod(containers=BIND_OPTS, initContainers=BIND_OPTS)
    assert pod.containers[0].volume_mounts == ({"name": "v", "mountPath": "/v"},)
    assert pod.init_containers[0].volume_mounts == ({"name": "v", "mountPath": "/v"},)


def test_a_node_update_changing_declared_features_is_update_node_declared_feature():
    # events.go (v1.37.2): extractNodeFeaturesChange
    from fastsched.framework.events import node_scheduling_properties_change

    old, new_node = _node(features=["FeatureA"]), _node(features=["FeatureA", "FeatureB"])
    [event] = node_scheduling_properties_change(new_node, old)
    assert event.resource == EventResource.NODE and event.action_type == ActionType.UPDATE_NODE_DECLARED_FEATURE
    assert node_scheduling_properties_change(_node(features=["FeatureA"]), old) == []


def test_scheduler_requeues_the_pod_when_its_node_declares_the_feature():
    from fastsched.scheduler import Scheduler

    s = Scheduler()
    s.add_node(make_node("n"))
    s.add_pod(_pod(containers=RESTART_ALL))
    (r,) = s.run()
    assert r.status == "Unschedulable" and ERR_REASON_UNSATISFIED_REQUIREMENTS in r.message
    s.update_node(_node("n", ["RestartAllContainersOnContainerExits"]))  # UpdateNodeDeclaredFeature: Queue
    (r,) = s.run()
    assert r.status == "Scheduled" and r.node_name == "n"


@pytest.mark.parametrize("seed", range(4))
def test_pre_filter_reuses_an_inference_only_for_the_same_spec_objects(seed):
    """PreFilter's requirements equal a fresh inference for every pod of a random sequence where
    pods share their spec objects (one template), have one of the fields the features read
    replaced (another object, maybe an equal value), or come from another framework."""
    rng = random.Random(seed)
    bases = [_pod(), _pod(containers=RESTART_ALL), _pod(hostNetwork=True, hostUsers=False),
             _bind_pod("containers"), _bind_pod("init_containers"), _bind_pod("ephemeral_containers")]
    variants = []
    for pod in bases:
        variants += [pod, pod.replace(name="other"), pod.replace(host_network=not pod.host_network, host_users=False),
                     pod.replace(host_users=None), pod.replace(containers=bases[rng.randrange(len(bases))].containers),
                     pod.replace(init_containers=bases[3].init_containers + bases[4].init_containers),
                     pod.replace(ephemeral_containers=bases[5].ephemeral_containers)]
    plugins = [NodeDeclaredFeatures(), NodeDeclaredFeatures(framework=Framework(DEFAULT_FRAMEWORK.registry))]
    for _ in range(300):
        pod = rng.choice(variants)
        pl = rng.choice(plugins)
        state = CycleState()
        _, status = pl.pre_filter(state, pod, None)
        want = DEFAULT_FRAMEWORK.infer_for_pod_scheduling(pod)
        if want:
            assert status is None and state.read(PRE_FILTER_STATE_KEY).reqs == want
        else:
            assert status is not None and status.code() == Code.SKIP
    with pytest.raises(ValueError):  # an inference's error is never kept as an answer
        NodeDeclaredFeatures(version=None)._inferred(bases[1])
