"""NodePorts: upstream's node_ports_test.go cases, and batch == per-node."""
from __future__ import annotations

import random

import pytest

from fastsched.api import Pod
from fastsched.framework import ActionType, Code, CycleState, EventResource, NodeInfo, QueueingHint
from fastsched.plugins.helper.tests.support import random_port_pod, single_plugin_framework
from fastsched.plugins.nodeports import ERR_REASON, NAME, NodePorts, fits, new
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, make_node, random_pod, random_snapshot


def port_pod(node_name: str, *host_ports: str, name: str = "p", sidecar: bool | None = None) -> Pod:
    """A pod whose container (or init container when ``sidecar`` is given) uses "PROTO/IP/PORT"."""
    ports = []
    for spec in host_ports:
        protocol, ip, port = spec.split("/")
        ports.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol})
    pod_spec: dict = {"containers": [{"name": "c", "image": "i", "ports": [] if sidecar is not None else ports}]}
    if sidecar is not None:
        init = {"name": "init", "image": "i", "ports": ports}
        if sidecar:
            init["restartPolicy"] = "Always"
        pod_spec["initContainers"] = [init]
    if node_name:
        pod_spec["nodeName"] = node_name
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod_spec}, validate=False)


CONFLICT = (Code.UNSCHEDULABLE, [ERR_REASON])
SKIP = "skip"

# (name, incoming pod, existing pod's ports, want): upstream's TestNodePorts table
CASES = [
    ("skip filter", Pod(name="p"), (), SKIP),
    ("other port", port_pod("m1", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/9090",), None),
    ("same udp port", port_pod("m1", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), CONFLICT),
    ("same tcp port", port_pod("m1", "TCP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), CONFLICT),
    ("different host ip", port_pod("m1", "TCP/127.0.0.1/8080"), ("TCP/127.0.0.2/8080",), None),
    ("different protocol", port_pod("m1", "UDP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), None),
    ("second udp port conflict", port_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     ("UDP/127.0.0.1/8080",), CONFLICT),
    ("first tcp port conflict", port_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), CONFLICT),
    ("first tcp port conflict due to 0.0.0.0 hostIP", port_pod("m1", "TCP/0.0.0.0/8001"),
     ("TCP/127.0.0.1/8001",), CONFLICT),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", port_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     ("TCP/127.0.0.1/8001",), CONFLICT),
    ("second tcp port conflict to 0.0.0.0 hostIP", port_pod("m1", "TCP/127.0.0.1/8001"),
     ("TCP/0.0.0.0/8001",), CONFLICT),
    ("second different protocol", port_pod("m1", "UDP/127.0.0.1/8001"), ("TCP/0.0.0.0/8001",), None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", port_pod("m1", "UDP/127.0.0.1/8001"),
     ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), CONFLICT),
    ("non-sidecar initContainer using hostPort", port_pod("", "TCP/0.0.0.0/8001", sidecar=False),
     ("TCP/0.0.0.0/8001",), SKIP),
    ("TCP hostPort conflict from sidecar initContainer", port_pod("", "TCP/0.0.0.0/8001", sidecar=True),
     ("TCP/0.0.0.0/8001",), CONFLICT),
    ("empty hostIP and protocol default to 0.0.0.0 and TCP", port_pod("", "/127.0.0.1/80"), ("TCP//80",), CONFLICT),
]


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


@pytest.mark.parametrize("name, pod, existing_ports, want", CASES, ids=[c[0] for c in CASES])
def test_node_ports(name, pod, existing_ports, want):
    node = make_node("m1")
    existing = port_pod("m1", *existing_ports, name="existing")
    plugin = new(None, None)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [])
    assert result is None
    if want == SKIP:
        assert status is not None and status.code() == Code.SKIP
        return
    assert status is None
    assert _verdict(plugin.filter(state, pod, NodeInfo(node, [existing]))) == want
    snapshot = build_snapshot([node], [existing])
    assert _verdict(plugin.filter_vectorized(state, pod, snapshot.batch()).status(0)) == want


def test_filter_without_pre_filter_state_is_an_error():
    plugin = NodePorts()
    pod = port_pod("", "TCP/0.0.0.0/80")
    status = plugin.filter(CycleState(), pod, NodeInfo(make_node("n")))
    assert status.code() == Code.ERROR
    assert status.reasons() == ['reading "PreFilterNodePorts" from cycleState: not found']
    snapshot = build_snapshot([make_node("n")])
    batch_status = plugin.filter_vectorized(CycleState(), pod, snapshot.batch())
    assert batch_status.code() == Code.ERROR and batch_status.reasons() == status.reasons()


@pytest.mark.parametrize("pod, existing, want", [
    (port_pod("", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/9090",), True),
    (port_pod("", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
     ("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"), True),
    (port_pod("", "TCP/127.0.0.1/80"), ("UDP/127.0.0.1/80",), True),
    (port_pod("", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/80",), False),
    (port_pod("", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
     ("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"), False),
])
def test_fits(pod, existing, want):
    assert fits(pod, NodeInfo(make_node("n"), [port_pod("n", *existing, name="e")])) is want


def test_events_to_register():
    assert [(e.event.resource, e.event.action_type) for e in NodePorts().events_to_register()] == [
        (EventResource.ASSIGNED_POD, ActionType.DELETE), (EventResource.NODE, ActionType.ADD)]
    assert NodePorts(enable_scheduling_queue_hint=False).events_to_register()[1].event.action_type == (
        ActionType.ADD | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL)


def _port_snapshot(seed: int):
    """Random nodes; existing pods from the generic generator plus host-port pods on ~1/4 of nodes."""
    snapshot = random_snapshot(seed, 250, 500)
    rng = random.Random(seed)
    names = list(snapshot.table.row_of)
    for i, node_name in enumerate(rng.sample(names, k=60)):
        snapshot.add_pod(random_port_pod(rng, i, node_name))
    return snapshot


@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_per_node(seed):
    fw = single_plugin_framework(NAME)
    snapshot = _port_snapshot(seed)
    rng = random.Random(100 + seed)
    conflicts = with_ports = 0
    for i in range(12):
        pod = random_port_pod(rng, i) if i % 3 else random_pod(rng, i)
        summary = assert_paths_equivalent(fw, snapshot, pod)
        if pod.host_ports:
            with_ports += 1
            conflicts += len(snapshot) - summary["feasible"]
        else:  # PreFilter skipped the plugin: every node passes
            assert NodePorts().pre_filter(CycleState(), pod, [])[1].code() == Code.SKIP
            assert summary["feasible"] == len(snapshot)
    assert with_ports >= 4 and conflicts >= 10


# Upstream Test_isSchedulableAfterAssignedPodDeleted (v1.37.2); st.MakePod().HostPort(p) is a TCP
# port on every address.
@pytest.mark.parametrize("old,want,err", [
    ("not-a-pod", QueueingHint.QUEUE, True),
    (port_pod("", name="e"), QueueingHint.QUEUE_SKIP, False),
    (port_pod("fake-node", name="e"), QueueingHint.QUEUE_SKIP, False),
    (port_pod("fake-node", "TCP/0.0.0.0/8081", name="e"), QueueingHint.QUEUE_SKIP, False),
    (port_pod("fake-node", "TCP/0.0.0.0/8080", name="e"), QueueingHint.QUEUE, False),
], ids=["backoff-wrong-old-object", "skip-queue-on-unscheduled", "skip-queue-on-non-hostport",
        "skip-queue-on-unrelated-hostport", "queue-on-released-hostport"])
def test_is_schedulable_after_assigned_pod_deleted(old, want, err):
    hint, error = NodePorts().is_schedulable_after_assigned_pod_deleted(port_pod("", "TCP/0.0.0.0/8080"), old, None)
    assert hint == want and (error is not None) == err


def test_assigned_pod_deleted_unscheduled_or_nominated():
    """Not upstream's rows: an unscheduled pod frees no port, a nominated one does."""
    target, user = port_pod("", "TCP/0.0.0.0/8080"), port_pod("", "TCP/0.0.0.0/8080", name="e")
    assert NodePorts.is_schedulable_after_assigned_pod_deleted(target, user, None) == (QueueingHint.QUEUE_SKIP, None)
    nominated = user.replace(nominated_node_name="n")
    assert NodePorts.is_schedulable_after_assigned_pod_deleted(target, nominated, None) == (QueueingHint.QUEUE, None)
