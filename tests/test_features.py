"""fastsched.features: the feature gates fastsched knows, with v1.34's defaults."""
from __future__ import annotations

import pytest

from fastsched.features import (DEFAULTS, KNOWN_GATES, FeatureGateError, FeatureGates, feature_gates_of)
from fastsched.runtime import new_framework
from fastsched.runtime.registry import Registry


def test_v1_34_defaults():
    assert DEFAULTS.enabled("SchedulerAsyncPreemption") is True
    assert DEFAULTS["SchedulerQueueingHints"] is True
    assert DEFAULTS["SchedulerPopFromBackoffQ"] is True
    assert DEFAULTS["DRAExtendedResource"] is False
    assert DEFAULTS["StorageCapacityScoring"] is False
    assert set(DEFAULTS) == set(KNOWN_GATES) and len(DEFAULTS) == len(KNOWN_GATES)
    assert DEFAULTS.overrides() == {} and repr(DEFAULTS) == "FeatureGates(v1.34 defaults)"


@pytest.mark.parametrize("given", [{"SchedulerAsyncPreemption": False}, "SchedulerAsyncPreemption=false",
                                   " SchedulerAsyncPreemption = false ,", {"SchedulerAsyncPreemption": "False"}])
def test_overrides(given):
    gates = FeatureGates(given)
    assert gates["SchedulerAsyncPreemption"] is False and gates["SchedulerQueueingHints"] is True
    assert gates.overrides() == {"SchedulerAsyncPreemption": False}
    assert gates == FeatureGates(gates) and gates != DEFAULTS
    assert gates.with_overrides("SchedulerAsyncPreemption=true") == DEFAULTS
    assert hash(gates) == hash(FeatureGates({"SchedulerAsyncPreemption": False}))


def test_unknown_gates_are_rejected_naming_the_known_ones():
    with pytest.raises(FeatureGateError, match=r"unrecognized feature gate: SchedulerAsyncPremption \(fastsched "
                                               r"knows: DRAExtendedResource, .*SchedulerAsyncPreemption, "):
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
    assert FeatureGates({"SchedulerQueueingHints": True})["SchedulerQueueingHints"]
    with pytest.raises(FeatureGateError, match=r"SchedulerQueueingHints=false is not supported: fastsched implements "
                                               r"SchedulerQueueingHints only as v1.34's default \(true, beta; .*"
                                               r"switchable gates: SchedulerAsyncPreemption"):
        FeatureGates({"SchedulerQueueingHints": False})


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
