"""fastsched.features: the feature gates fastsched knows, with v1.37.2's defaults."""
from __future__ import annotations

import pytest

from fastsched.features import (DEFAULTS, KNOWN_GATES, FeatureGateError, FeatureGates, feature_gates_of)
from fastsched.runtime import new_framework
from fastsched.runtime.registry import Registry


# (gate, default, stage, locked) at v1.37.2: k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go
V1_37_GATES = [
    ("SchedulerAsyncPreemption", True, "beta", False),
    ("SchedulerPopFromBackoffQ", True, "beta", False),
    ("SchedulerAsyncAPICalls", False, "beta", False),
    ("OpportunisticBatching", True, "beta", False),
    ("NominatedNodeNameForExpectation", True, "beta", False),
    ("ClearingNominatedNodeNameAfterBinding", True, "beta", False),
    ("GenericWorkload", False, "beta", False),
    ("TopologyAwareWorkloadScheduling", False, "alpha", False),
    ("PodGroupPreemptionPolicy", False, "alpha", False),
    ("CompositePodGroup", False, "alpha", False),
    ("WorkloadWithJob", False, "alpha", False),
    ("NodeDeclaredFeatures", True, "GA", True),
    ("NodeInclusionPolicyInPodTopologySpread", True, "GA", True),
    ("MatchLabelKeysInPodTopologySpread", True, "beta", False),
    ("StorageCapacityScoring", True, "beta", False),
    ("VolumeLimitScaling", True, "beta", False),
    ("MutableCSINodeAllocatableCount", True, "GA", True),
    ("PodLevelResources", True, "beta", False),
    ("InPlacePodVerticalScaling", True, "GA", True),
    ("InPlacePodVerticalScalingSchedulerPreemption", False, "alpha", False),
    ("DynamicResourceAllocation", True, "GA", True),
    ("DRAExtendedResource", True, "GA", True),
    ("DRAPrioritizedList", True, "GA", True),
    ("DRAAdminAccess", True, "GA", True),
    ("DRAResourceClaimDeviceStatus", True, "GA", True),
    ("DRAConsumableCapacity", True, "beta", False),
    ("DRADeviceTaints", True, "GA", False),
    ("DRADeviceBindingConditions", True, "beta", False),
    ("DRAPartitionableDevices", True, "beta", False),
    ("DRASchedulerFilterTimeout", True, "beta", False),
    ("DRAWorkloadResourceClaims", False, "beta", False),
]


@pytest.mark.parametrize("name,default,stage,locked", V1_37_GATES)
def test_v1_37_defaults(name, default, stage, locked):
    gate = KNOWN_GATES[name]
    assert (DEFAULTS[name], gate.default, gate.stage, gate.locked) == (default, default, stage, locked)


def test_defaults():
    assert DEFAULTS.enabled("SchedulerAsyncPreemption") is True
    assert set(DEFAULTS) == set(KNOWN_GATES) and len(DEFAULTS) == len(KNOWN_GATES)
    assert DEFAULTS.overrides() == {} and repr(DEFAULTS) == "FeatureGates(v1.37 defaults)"
    for name, gate in KNOWN_GATES.items():
        assert all(dep in KNOWN_GATES for dep in gate.depends_on), name
        assert not (gate.locked and gate.switchable), name


@pytest.mark.parametrize("name", ["SchedulerQueueingHints", "SidecarContainers"])
def test_gates_removed_upstream_are_unknown(name):
    # removed from kube_features.go by v1.37 (1.35 and 1.36): upstream's flag rejects them
    with pytest.raises(FeatureGateError, match=f"unrecognized feature gate: {name} "):
        FeatureGates({name: True})


def test_locked_gates():
    # k8s.io/component-base@v0.37.2/featuregate/feature_gate.go: unsafeSetFromMap
    assert FeatureGates("NodeDeclaredFeatures=true")["NodeDeclaredFeatures"] is True
    with pytest.raises(FeatureGateError) as e:
        FeatureGates("NodeDeclaredFeatures=false")
    assert str(e.value) == "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"
    with pytest.raises(FeatureGateError) as e:
        FeatureGates("DynamicResourceAllocation=false,DRAExtendedResource=false")
    assert str(e.value) == ("[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, "
                            "cannot set feature gate DRAExtendedResource to false, feature is locked to true]")


def test_dependencies():
    with pytest.raises(FeatureGateError) as e:
        FeatureGates("TopologyAwareWorkloadScheduling=true")
    assert str(e.value) == ("TopologyAwareWorkloadScheduling is enabled, but depends on features that are "
                            "disabled: [GenericWorkload]")
    # defaultKubernetesFeatureGateDependencies: WorkloadWithJob: {GenericWorkload}
    with pytest.raises(FeatureGateError) as e:
        FeatureGates("WorkloadWithJob=true")
    assert str(e.value) == "WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]"
    assert FeatureGates("GenericWorkload=true,WorkloadWithJob=true")["WorkloadWithJob"] is True
    with pytest.raises(FeatureGateError) as e:
        FeatureGates("DRADeviceTaints=false")   # DRADeviceTaintRules (on) depends on it
    assert str(e.value) == ("DRADeviceTaintRules is enabled, but depends on features that are disabled: "
                            "[DRADeviceTaints]")
    # DRAFractionalCapacityRange is off at v1.37.2 (its on-by-default spec needs
    # --min-compatibility-version 1.37) and depends on DRAConsumableCapacity
    assert FeatureGates("DRAFractionalCapacityRange=true")["DRAFractionalCapacityRange"] is True
    assert FeatureGates({})["DRAFractionalCapacityRange"] is False


def test_switchable_gates():
    assert [n for n, g in KNOWN_GATES.items() if g.switchable] == [
        "SchedulerAsyncPreemption", "SchedulerPopFromBackoffQ", "OpportunisticBatching", "NominatedNodeNameForExpectation",
        "ClearingNominatedNodeNameAfterBinding", "GenericWorkload", "TopologyAwareWorkloadScheduling",
        "PodGroupPreemptionPolicy", "CompositePodGroup", "WorkloadWithJob", "StorageCapacityScoring", "VolumeLimitScaling",
        "DRAFractionalCapacityRange", "DRADeviceTaints", "DRADeviceTaintRules", "DRADeviceCompatibilityGroups",
        "DRADerivedAttributes", "DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAOptionalNodeOperations",
        "DRAWorkloadResourceClaims"]
    assert FeatureGates("OpportunisticBatching=false,StorageCapacityScoring=false").overrides() == {
        "OpportunisticBatching": False, "StorageCapacityScoring": False}


def test_generic_workload_reaches_the_scheduler():
    """GenericWorkload=true: the cache tracks pod groups and a gang's members are scheduled in one
    pod group cycle (GangScheduling's Permit lets both through); the gates that need it are
    switchable with their dependencies' errors; with the gate off a member is a pod alone."""
    from fastsched import Scheduler
    from fastsched.api.objects import PodSchedulingGroup
    from fastsched.testing import make_node, make_pod

    gang = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    s = Scheduler(feature_gates="GenericWorkload=true")
    assert s.cache.generic_workload is True
    s.add_nodes([make_node("n0", cpu="2")])
    s.add(gang)
    s.add_pods([make_pod("m0", cpu="1").replace(scheduling_group=PodSchedulingGroup("g")),
                make_pod("m1", cpu="1").replace(scheduling_group=PodSchedulingGroup("g"))])
    assert {r.pod.name: (r.status, r.node_name) for r in s.run()} == {"m0": ("Scheduled", "n0"),
                                                                       "m1": ("Scheduled", "n0")}
    cond = s.cluster.get_object("PodGroup", "g", "default").conditions[0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodGroupInitiallyScheduled", "True", "Scheduled")
    # CompositePodGroup is switchable, and needs GenericWorkload and TopologyAwareWorkloadScheduling
    # (kube_features.go: CompositePodGroup: {GenericWorkload, TopologyAwareWorkloadScheduling})
    assert FeatureGates("GenericWorkload=true,TopologyAwareWorkloadScheduling=true,"
                        "CompositePodGroup=true").enabled("CompositePodGroup")
    with pytest.raises(FeatureGateError, match="CompositePodGroup is enabled, but depends on features that are "
                                               r"disabled: \[TopologyAwareWorkloadScheduling\]"):
        FeatureGates("GenericWorkload=true,CompositePodGroup=true")
    with pytest.raises(FeatureGateError, match="CompositePodGroup is enabled, but depends on features that are "
                                               r"disabled: \[GenericWorkload TopologyAwareWorkloadScheduling\]"):
        FeatureGates("CompositePodGroup=true")
    # PodGroupPreemptionPolicy is switchable, and needs GenericWorkload
    assert FeatureGates("GenericWorkload=true,PodGroupPreemptionPolicy=true").enabled("PodGroupPreemptionPolicy")
    with pytest.raises(FeatureGateError, match="PodGroupPreemptionPolicy is enabled, but depends on features "
                                               r"that are disabled: \[GenericWorkload\]"):
        FeatureGates("PodGroupPreemptionPolicy=true")
    # DRAWorkloadResourceClaims is switchable, and needs GenericWorkload (and DynamicResourceAllocation)
    assert FeatureGates("GenericWorkload=true,DRAWorkloadResourceClaims=true").enabled("DRAWorkloadResourceClaims")
    with pytest.raises(FeatureGateError, match="DRAWorkloadResourceClaims is enabled, but depends on features "
                                               r"that are disabled: \[GenericWorkload\]"):
        FeatureGates("DRAWorkloadResourceClaims=true")
    # TopologyAwareWorkloadScheduling is switchable, and needs GenericWorkload (upstream's dependency check)
    assert FeatureGates("GenericWorkload=true,TopologyAwareWorkloadScheduling=true").enabled(
        "TopologyAwareWorkloadScheduling")
    with pytest.raises(FeatureGateError, match="TopologyAwareWorkloadScheduling is enabled, but depends on features "
                                               r"that are disabled: \[GenericWorkload\]"):
        FeatureGates("TopologyAwareWorkloadScheduling=true")
    off = Scheduler()
    assert off.cache.generic_workload is False
    off.add_nodes([make_node("n0", cpu="2")])
    off.add(gang)
    off.add_pods([make_pod("m0", cpu="1").replace(scheduling_group=PodSchedulingGroup("g"))])
    (r,) = off.run()  # a gang of 2 with one member: scheduled alone, no group cycle, no condition
    assert r.status == "Scheduled" and not off.cluster.get_object("PodGroup", "g", "default").conditions


def test_volume_limit_scaling_off_reaches_the_plugin():
    """VolumeLimitScaling=false builds NodeVolumeLimits without its driver check (v1.37.2's
    ``NewCSI`` reads the gate), from a Scheduler's gates as from a framework's."""
    from fastsched import Scheduler

    def plugin(sched):
        return sched.profiles["default-scheduler"].plugins_map["NodeVolumeLimits"]

    assert plugin(Scheduler()).enable_volume_limit_scaling is True
    assert plugin(Scheduler(feature_gates="VolumeLimitScaling=false")).enable_volume_limit_scaling is False


@pytest.mark.parametrize("given", [{"SchedulerAsyncPreemption": False}, "SchedulerAsyncPreemption=false",
                                   " SchedulerAsyncPreemption = false ,", {"SchedulerAsyncPreemption": "False"}])
def test_overrides(given):
    gates = FeatureGates(given)
    assert gates["SchedulerAsyncPreemption"] is False and gates["SchedulerPopFromBackoffQ"] is True
    assert gates.overrides() == {"SchedulerAsyncPreemption": False}
    assert gates == FeatureGates(gates) and gates != DEFAULTS
    assert gates.with_overrides("SchedulerAsyncPreemption=true") == DEFAULTS
    assert hash(gates) == hash(FeatureGates({"SchedulerAsyncPreemption": False}))


def test_unknown_gates_are_rejected_naming_the_known_ones():
    with pytest.raises(FeatureGateError, match=r"unrecognized feature gate: SchedulerAsyncPremption \(fastsched "
                                               r"knows: ClearingNominatedNodeNameAfterBinding, .*SchedulerAsyncPreemption, "):
        FeatureGates({"SchedulerAsyncPremption": False})
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        DEFAULTS.enabled("Nope")
    with pytest.raises(ValueError):  # FeatureGateError is a ValueError
        FeatureGates("Nope=true")


def test_bad_values_and_fixed_gates():
    with pytest.raises(FeatureGateError, match=r'invalid value of SchedulerAsyncPreemption=maybe, err: '
                                               r'strconv.ParseBool: parsing "maybe": invalid syntax'):
        FeatureGates("SchedulerAsyncPreemption=maybe")
    with pytest.raises(FeatureGateError, match="missing bool value for SchedulerAsyncPreemption"):
        FeatureGates("SchedulerAsyncPreemption")
    with pytest.raises(FeatureGateError, match="not a list|mapping of gate names"):
        FeatureGates(["SchedulerAsyncPreemption"])  # type: ignore[arg-type]
    # a gate fastsched implements only at its default: that value is fine, the other is an error
    assert FeatureGates({"SchedulerAsyncAPICalls": False})["SchedulerAsyncAPICalls"] is False
    with pytest.raises(FeatureGateError, match=r"SchedulerAsyncAPICalls=true is not supported: fastsched implements "
                                               r"SchedulerAsyncAPICalls only as v1.37's default \(false, beta; .*"
                                               r"switchable gates: SchedulerAsyncPreemption, SchedulerPopFromBackoffQ, OpportunisticBatching, "
                                               r"NominatedNodeNameForExpectation, "):
        FeatureGates({"SchedulerAsyncAPICalls": True})
    # upstream's dependency error comes first: InPlacePodLevelResourcesVerticalScaling needs it
    with pytest.raises(FeatureGateError, match=r"^InPlacePodLevelResourcesVerticalScaling is enabled, but depends on "
                                               r"features that are disabled: \[PodLevelResources\]$"):
        FeatureGates({"PodLevelResources": False})


def test_the_framework_carries_the_gates():
    assert new_framework(Registry(), None).feature_gates is DEFAULTS
    fw = new_framework(Registry(), None, feature_gates={"SchedulerAsyncPreemption": False})
    assert fw.feature_gates["SchedulerAsyncPreemption"] is False and feature_gates_of(fw) is fw.feature_gates
    assert new_framework(Registry(), None, feature_gates="SchedulerAsyncPreemption=false").feature_gates == \
        fw.feature_gates
    with pytest.raises(FeatureGateError):
        new_framework(Registry(), None, feature_gates={"Bogus": True})
    assert feature_gates_of(None) is DEFAULTS and feature_gates_of(object()) is DEFAULTS


def test_scheduler_hands_its_feature_gates_to_every_profile():
    from fastsched.features import FeatureGateError
    from fastsched.scheduler import Scheduler

    s = Scheduler(feature_gates="SchedulerAsyncPreemption=false")
    (fw,) = s.profiles.values()
    assert s.feature_gates["SchedulerAsyncPreemption"] is False
    assert fw.feature_gates is s.feature_gates
    assert fw.plugin("DefaultPreemption").enable_async_preemption is False
    assert Scheduler().profiles["default-scheduler"].plugin("DefaultPreemption").enable_async_preemption is True
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Bogus"):
        Scheduler(feature_gates={"Bogus": True})


def test_dra_device_taint_gates_reach_the_plugin():
    """DRADeviceTaints=false turns the allocator's taint checks off; DRADeviceTaintRules=false (which
    DRADeviceTaints=false needs too: it depends on it) stops DeviceTaintRules tainting devices."""
    from types import SimpleNamespace

    from fastsched.framework.objects import ObjectStore
    from fastsched.plugins.dynamicresources import DynamicResources

    def plugin(gates):
        return DynamicResources(handle=SimpleNamespace(client=ObjectStore(), feature_gates=FeatureGates(gates)))

    on = plugin(None)
    assert on.features.device_taints and on.manager.taint_rules_enabled
    rules_off = plugin("DRADeviceTaintRules=false")
    assert rules_off.features.device_taints and not rules_off.manager.taint_rules_enabled
    off = plugin("DRADeviceTaints=false,DRADeviceTaintRules=false")
    assert not off.features.device_taints and not off.manager.taint_rules_enabled
    with pytest.raises(FeatureGateError, match=r"^DRADeviceTaintRules is enabled, but depends on features that "
                                               r"are disabled: \[DRADeviceTaints\]$"):
        FeatureGates("DRADeviceTaints=false")


@pytest.mark.parametrize("given", [None, {"SchedulerAsyncPreemption": False},
                                   {"GenericWorkload": True, "DRADeviceTaints": True, "SchedulerPopFromBackoffQ": False},
                                   "OpportunisticBatching=false,GenericWorkload=true,DRAWorkloadResourceClaims=true"])
def test_the_kept_non_defaults_are_the_loaders_gate_overrides(given):
    # gate_overrides answers a FeatureGates from the pairs it keeps (non_defaults), any other
    # mapping by reading every gate: both give the same pairs, before and after a pickle round trip
    import pickle

    from fastsched.api.load import gate_overrides

    gates = FeatureGates(given)
    by_reading = gate_overrides(dict(gates.items()))
    assert by_reading == {(n, v) for n, v in gates.items() if v != KNOWN_GATES[n].default}
    assert gates.non_defaults() == by_reading
    assert gate_overrides(gates) == by_reading
    assert gate_overrides(gates) is gate_overrides(gates)  # kept, not recomputed
    again = pickle.loads(pickle.dumps(gates))
    assert gate_overrides(again) == by_reading and again == gates
    assert bool(by_reading) == (given is not None)
