"""DeviceTaintRules (DRADeviceTaintRules, GA at v1.37.2): the kind's validation
(``ValidateDeviceTaintRule``) and the slice tracker's ``applyPatches`` (a rule adds its taint to
every device its selector picks), as DynamicResources' allocator sees the slices; the gates."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.api import objects_of
from fastsched.api.resource import (DeviceTaintRule, parse_device_class, parse_device_taint_rule, parse_resource_claim,
                                    parse_resource_slice, validate_device_taint_rule)
from fastsched.config.args import DynamicResourcesArgs
from fastsched.features import FeatureGates
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node
from fastsched.api import Pod

DRIVER = "gpu.example.com"


def rule(selector: dict | None, effect: str = "NoSchedule", key: str = "example.com/unhealthy",
         name: str = "r") -> DeviceTaintRule:
    spec: dict = {"taint": {"key": key, "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return parse_device_taint_rule({"metadata": {"name": name}, "spec": spec})


def errors(r: DeviceTaintRule) -> list[str]:
    return [str(e) for e in validate_device_taint_rule(r)]


def test_validation():
    assert errors(rule({"driver": DRIVER, "pool": "node-0", "device": "gpu-0"})) == []
    assert errors(rule(None, effect="None")) == []
    assert errors(rule({}, effect="PreferNoSchedule")) == [
        'spec.taint.effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", '
        '"None"']
    assert errors(rule({}, effect="")) == ["spec.taint.effect: Required value"]
    assert errors(rule({"device": "GPU_0"}))[0].startswith('spec.deviceSelector.device: Invalid value: "GPU_0"')
    assert errors(rule({}, key="-bad"))[0].startswith('spec.taint.key: Invalid value: "-bad"')


def test_the_kind_loads_as_a_cluster_object():
    (r,) = objects_of([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
                        "spec": {"deviceSelector": {"pool": "p"}, "taint": {"key": "k", "effect": "None"}}}])
    assert isinstance(r, DeviceTaintRule) and r.namespace == "" and r.pool == "p" and r.driver is None


@pytest.mark.parametrize("selector,selects", [
    (None, False),                                     # no selector: no device
    ({}, True),                                        # an empty one: every device
    ({"driver": DRIVER}, True), ({"driver": "other.example.com"}, False),
    ({"pool": "worker"}, True), ({"pool": "other"}, False),
    ({"driver": DRIVER, "pool": "worker", "device": "gpu-0"}, True), ({"device": "gpu-1"}, False),
])
def test_selects(selector, selects):
    assert rule(selector).selects(DRIVER, "worker", "gpu-0") is selects


def _cycle(objects, gates=None, tolerations=None):
    exactly: dict = {"deviceClassName": "gpu"}
    if tolerations:
        exactly["tolerations"] = tolerations
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "uid-c"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})
    store = ObjectStore([parse_device_class({"metadata": {"name": "gpu"}, "spec": {}}),
                         parse_resource_slice({"metadata": {"name": "s"}, "spec": {
                             "driver": DRIVER, "nodeName": "worker",
                             "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
                             "devices": [{"name": "gpu-0"}]}}), claim, *objects])
    handle = SimpleNamespace(client=store, feature_gates=FeatureGates(gates))
    plugin = DynamicResources(DynamicResourcesArgs(), handle)
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
                             "spec": {"containers": [{"name": "c", "image": "x"}],
                                      "resourceClaims": [{"name": "r", "resourceClaimName": "c"}]}}, validate=False)
    (info,) = list(build_snapshot([make_node("worker")]).batch())
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [info])
    assert pre is None
    status = plugin.filter(state, pod, info)
    return None if status is None else (status.code(), status.reasons())


def test_a_rule_taints_the_devices_it_selects():
    refused = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["cannot allocate all claims"])
    assert _cycle([]) is None
    assert _cycle([rule({"driver": DRIVER})]) == refused
    assert _cycle([rule({"driver": DRIVER}, effect="NoExecute")]) == refused
    assert _cycle([rule({"driver": DRIVER}, effect="None")]) is None      # effect None: informational
    assert _cycle([rule(None)]) is None                                   # no selector: no device
    assert _cycle([rule({"pool": "elsewhere"})]) is None
    assert _cycle([rule({"driver": DRIVER})],
                  tolerations=[{"key": "example.com/unhealthy", "operator": "Exists"}]) is None


def test_the_gates_switch_rules_and_taints_off():
    refused = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["cannot allocate all claims"])
    assert _cycle([rule({})], gates="DRADeviceTaintRules=false") is None
    tainted = parse_resource_slice({"metadata": {"name": "t"}, "spec": {
        "driver": DRIVER, "nodeName": "worker", "pool": {"name": "worker-2", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}})
    # a rule for pool "worker" ignored: its device serves the claim
    assert _cycle([rule({"pool": "worker"}), tainted], gates="DRADeviceTaintRules=false") is None
    # every device tainted (the rule, and pool worker-2's own taint) ...
    assert _cycle([rule({}), tainted]) == refused
    # ... and with the rules off, worker's device is free again; with taints off, all of them
    assert _cycle([rule({"pool": "worker"}), tainted], gates="DRADeviceTaintRules=false") is None
    assert _cycle([rule({}), tainted], gates="DRADeviceTaints=false,DRADeviceTaintRules=false") is None
