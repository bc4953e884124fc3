"""VolumeBinding's Score under the StorageCapacityScoring gate (alpha, off in v1.34), its default
shape and VolumeBindingArgs' validation with and without the gate."""
from __future__ import annotations

import types

import pytest

from fastsched import Scheduler
from fastsched.config import ConfigError, load_config
from fastsched.config.args import UtilizationShapePoint, VolumeBindingArgs
from fastsched.features import FeatureGateError, FeatureGates
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.plugins.volumebinding import new
from fastsched.sim.storage import (ZONE, csi_driver_manifest, csi_storage_capacity_manifest, pod_with_claims,
                                   pv_manifest, pvc_manifest, storage_class_manifest)

from fastsched.plugins.helper.tests import volumes as support
from fastsched.plugins.helper.tests.volumes import node, node_info, pod

ON = FeatureGates({"StorageCapacityScoring": True})
HOST = "kubernetes.io/hostname"


def _plugin(objects, gates=ON, args=None):
    handle = types.SimpleNamespace(client=ObjectStore(support.test_objects(objects)), feature_gates=gates)
    return new(args, handle)


def _scores(plugin, p, nodes):
    infos = [node_info(n) for n in nodes]
    state = CycleState()
    _, status = plugin.pre_filter(state, p, infos)
    assert status is None, status
    for ni in infos:
        assert plugin.filter(state, p, ni) is None
    status = plugin.pre_score(state, p, infos)
    if status is not None:
        return status.code().name
    return [plugin.score(state, p, ni)[0] for ni in infos]


NODES = [node("node-a", {HOST: "node-a", ZONE: "zone-a"}), node("node-b", {HOST: "node-b", ZONE: "zone-b"})]
WAIT = storage_class_manifest("wait", provisioner="kubernetes.io/no-provisioner")


def _local_pv(name, host, capacity, cls="wait"):
    return pv_manifest(name, capacity=capacity, storage_class=cls, node_affinity={HOST: [host]})


def test_static_volumes_score_by_the_utilization_of_the_volume_they_would_bind():
    # the default shape (0% -> 10, 100% -> 0, x10): the node whose volume is least used wins
    objects = [WAIT, _local_pv("pv-a", "node-a", "100Gi"), _local_pv("pv-b", "node-b", "200Gi"),
               pvc_manifest("data", storage_class="wait", request="50Gi")]
    assert _scores(_plugin(objects), pod("p", ["data"]), NODES) == [50, 75]


def test_without_the_gate_prescore_skips_and_score_is_zero():
    objects = [WAIT, _local_pv("pv-a", "node-a", "100Gi"), pvc_manifest("data", storage_class="wait", request="50Gi")]
    plugin = _plugin(objects, gates=FeatureGates("StorageCapacityScoring=false"))  # on by default since v1.37
    assert plugin.scorer is None
    assert _scores(plugin, pod("p", ["data"]), NODES[:1]) == "SKIP"


def test_a_custom_shape_and_several_classes_average_rounded():
    fast = storage_class_manifest("fast", provisioner="kubernetes.io/no-provisioner")
    objects = [WAIT, fast, _local_pv("pv-a", "node-a", "100Gi"), _local_pv("pv-b", "node-b", "100Gi"),
               _local_pv("fast-a", "node-a", "10Gi", "fast"), _local_pv("fast-b", "node-b", "30Gi", "fast"),
               pvc_manifest("data", storage_class="wait", request="25Gi"),
               pvc_manifest("cache", storage_class="fast", request="10Gi")]
    args = VolumeBindingArgs(shape=[UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])  # most used first
    # node-a: wait 25% -> 25, fast 100% -> 100: (25 + 100) / 2 = 62.5 -> 63 (Go's math.Round)
    # node-b: wait 25% -> 25, fast 10/30 = 33% -> 33: 29
    assert _scores(_plugin(objects, args=args), pod("p", ["data", "cache"]), NODES) == [63, 29]


def _dynamic_objects(caps):
    objects = [storage_class_manifest("dyn", provisioner="csi.example.com"),
               csi_driver_manifest("csi.example.com", storage_capacity=True)]
    for zone, capacity in caps.items():
        objects.append(csi_storage_capacity_manifest(f"cap-{zone}", "dyn", capacity, {ZONE: zone}))
    return objects


def test_provisioned_volumes_score_by_the_capacity_left_in_the_nodes_topology():
    objects = _dynamic_objects({"zone-a": "100Gi", "zone-b": "50Gi"})
    objects.append(pvc_manifest("data", storage_class="dyn", request="10Gi"))
    assert _scores(_plugin(objects), pod("p", ["data"]), NODES) == [90, 80]


def test_two_claims_of_a_class_count_the_capacity_once():
    objects = _dynamic_objects({"zone-a": "100Gi", "zone-b": "100Gi"})
    objects += [pvc_manifest("one", storage_class="dyn", request="30Gi"),
                pvc_manifest("two", storage_class="dyn", request="30Gi")]
    assert _scores(_plugin(objects), pod("p", ["one", "two"]), NODES) == [40, 40]   # 60 of 100 -> 40


def test_static_bindings_take_precedence_over_provisioning_and_untracked_drivers_score_zero():
    objects = _dynamic_objects({"zone-a": "100Gi"}) + [
        WAIT, _local_pv("pv-a", "node-a", "40Gi"), pvc_manifest("data", storage_class="wait", request="10Gi"),
        pvc_manifest("logs", storage_class="dyn", request="10Gi")]
    # node-a binds "data" statically (10 of 40 -> 75) and the provisioned claim is not scored
    assert _scores(_plugin(objects), pod("p", ["data", "logs"]), NODES[:1]) == [75]
    untracked = [storage_class_manifest("dyn", provisioner="csi.example.com"),
                 csi_driver_manifest("csi.example.com", storage_capacity=False),
                 pvc_manifest("logs", storage_class="dyn", request="10Gi")]
    assert _scores(_plugin(untracked), pod("p", ["logs"]), NODES) == [0, 0]


def test_a_pod_without_claims_scores_zero_with_the_gate():
    plugin = _plugin([])
    infos = [node_info(n) for n in NODES]
    state = CycleState()
    p = pod("p")
    _, status = plugin.pre_filter(state, p, infos)
    assert status.code().name == "SKIP"
    assert plugin.pre_score(state, p, infos) is None   # upstream does not skip with the gate on
    assert [plugin.score(state, p, ni)[0] for ni in infos] == [0, 0]


def test_the_scheduler_prefers_the_bigger_volume_with_the_gate_and_not_without():
    def run(gates):
        sched = Scheduler(seed=0, feature_gates=gates, record="all")
        sched.add([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {HOST: n}},
                    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
                   for n in ("node-a", "node-b", "node-c")])
        sched.add([WAIT, _local_pv("pv-a", "node-a", "60Gi"), _local_pv("pv-b", "node-b", "500Gi"),
                   _local_pv("pv-c", "node-c", "55Gi"),
                   pvc_manifest("data", storage_class="wait", request="50Gi"), pod_with_claims("db", ["data"])])
        (result,) = sched.run()
        return sched, result

    sched, result = run({"StorageCapacityScoring": True})
    assert result.node_name == "node-b"   # 50 of 500: 90 against 16 and 9
    assert sched.get_object("PersistentVolumeClaim", "data").volume_name == "pv-b"
    record = result.history[-1]
    assert record.score_table(top=3)[0]["node"] == "node-b"


# -- args ----------------------------------------------------------------------------------------------
def test_args_shape_defaults_and_validation_follow_the_gate():
    assert VolumeBindingArgs().effective_shape(True) == [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
    assert VolumeBindingArgs().effective_shape(False) is None
    bad = VolumeBindingArgs(shape=[UtilizationShapePoint(50, 5), UtilizationShapePoint(10, 11)])
    errors = [str(e) for e in bad.validate("args", storage_capacity_scoring=True)]
    assert errors == ["args.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order",
                      "args.shape[1].score: Invalid value: 11: not in valid range [0, 10]"]
    (off,) = bad.validate("args")
    assert "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring" in str(off)
    assert VolumeBindingArgs(shape=[]).validate(storage_capacity_scoring=True) == []   # defaulted


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: VolumeBinding
        args: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}
"""


def test_a_config_with_a_shape_needs_the_gate():
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.shape: Invalid value"):
        load_config(CONFIG, feature_gates={"StorageCapacityScoring": False})  # on by default since v1.37
    cfg = load_config(CONFIG, feature_gates={"StorageCapacityScoring": True})
    assert cfg.profiles[0].plugin_config[0].args.shape[1].score == 10
    sched = Scheduler(CONFIG, feature_gates={"StorageCapacityScoring": True})
    plugin = sched.profiles["default-scheduler"].plugin("VolumeBinding")
    assert plugin.scorer is not None and plugin.scorer(100) == 100   # the config's (inverted) shape, x10
    with pytest.raises(ConfigError):
        Scheduler(CONFIG, feature_gates={"StorageCapacityScoring": False})


def test_the_gate_is_switchable_and_typed():
    assert FeatureGates("StorageCapacityScoring=true").enabled("StorageCapacityScoring")
    with pytest.raises(FeatureGateError):
        FeatureGates({"StorageCapacityScoring": "maybe"})
