"""DefaultBinder: the Binding object, binding through the handle's client, errors, no client."""
from __future__ import annotations

from fastsched.api import Pod
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.interface import BindPlugin
from fastsched.framework.status import Code
from fastsched.plugins import in_tree_registry
from fastsched.plugins.defaultbinder import NAME, DefaultBinder, binding_for, new
from fastsched.runtime.framework import new_framework
from fastsched.testing import single_plugin_profile


class RecordingClient:
    def __init__(self, fail: Exception | None = None):
        self.calls: list[tuple[str, str]] = []
        self.fail = fail

    def bind(self, pod, node_name):
        if self.fail is not None:
            raise self.fail
        self.calls.append((pod.key, node_name))


class Handle:
    def __init__(self, client):
        self.client = client


POD = Pod(name="foo", namespace="ns", uid="uid-1")


def test_binding_object():
    assert binding_for(POD, "foohost") == {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"namespace": "ns", "name": "foo", "uid": "uid-1"},
        "target": {"kind": "Node", "name": "foohost"},
    }


def test_bind_through_client():
    client = RecordingClient()
    plugin = new(None, Handle(client))
    assert isinstance(plugin, BindPlugin) and plugin.name() == NAME
    assert plugin.bind(CycleState(), POD, "foohost") is None
    assert client.calls == [("ns/foo", "foohost")]


def test_client_error_becomes_error_status():
    plugin = DefaultBinder(Handle(RecordingClient(fail=RuntimeError("binding rejected"))))
    status = plugin.bind(CycleState(), POD, "foohost")
    assert status.code() == Code.ERROR
    assert status.reasons() == ["binding rejected"]


def test_no_client_succeeds_without_recording():
    assert DefaultBinder(Handle(None)).bind(CycleState(), POD, "n") is None
    assert DefaultBinder(None).bind(CycleState(), POD, "n") is None


def test_through_the_framework():
    client = RecordingClient(fail=ValueError("conflict"))
    fw = new_framework(in_tree_registry(), single_plugin_profile("ImageLocality"), client=client)
    status = fw.run_bind_plugins(CycleState(), POD, "n1")
    assert status.code() == Code.ERROR
    assert status.message() == 'running Bind plugin "DefaultBinder": conflict'
    client.fail = None
    assert fw.run_bind_plugins(CycleState(), POD, "n1") is None
    assert client.calls == [("ns/foo", "n1")]
    # without a client
    assert new_framework(in_tree_registry(), single_plugin_profile("ImageLocality")).run_bind_plugins(
        CycleState(), POD, "n1") is None
