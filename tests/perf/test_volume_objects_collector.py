"""A createPods op with a PV and claim per pod (``persistentVolumeTemplatePath``, upstream's
CreatePodWithPersistentVolume) makes and adds those objects and clones the pods with the cyclic
collector paused (``WorkloadOps._with_volumes``: the passes the heap's growth started there found
nothing to free), and leaves the collector as it found it, also when the op fails."""
from __future__ import annotations

import gc

import pytest
import yaml

import fastsched.api.objects as objects_module
import fastsched.sim.storage as storage_module
from fastsched.perf import parse_perf_config, run_perf
from fastsched.perf.ops import WorkloadOps
from fastsched.scheduler import Scheduler
from tests.perf.test_perf_volume_template_fuzz import CONFIG, PV, PVC, _files, _template


def _run():
    config = parse_perf_config(yaml.safe_load(CONFIG), source="cfg.yaml", templates=_files(_template(PV), _template(PVC)))
    (result,) = run_perf(config, label_filter=None).results
    return result


@pytest.fixture
def seen(monkeypatch):
    """What gc.isenabled() was, per step of the volume objects' creation (the objects' derivation,
    each add_object of a PV or claim, each pod's clone)."""
    seen: dict[str, list[bool]] = {"objects": [], "add_object": [], "clone": [], "off_before": []}
    monkeypatch.setattr("fastsched.perf.ops.gc.collect", lambda *a: 0)  # (the phase's full collection: not looked at)
    real_objects = storage_module.perf_volume_objects

    def perf_volume_objects(*args, **kwargs):
        seen["objects"].append(gc.isenabled())
        return real_objects(*args, **kwargs)

    real_add = Scheduler.add_object

    def add_object(self, obj, *args, **kwargs):
        if type(obj).__name__ in ("PersistentVolume", "PersistentVolumeClaim"):
            seen["add_object"].append(gc.isenabled())
        return real_add(self, obj, *args, **kwargs)

    real_copier = objects_module._field_copier
    inside = []   # (the pod copies _with_volumes makes, not the scheduler's)

    def field_copier(cls):
        copy = real_copier(cls)
        if cls.__name__ != "Pod" or not inside:
            return copy

        def copy_pod(obj):
            seen["clone"].append(gc.isenabled())
            return copy(obj)
        return copy_pod

    real_with_volumes = WorkloadOps._with_volumes

    def with_volumes(self, *args, **kwargs):
        inside.append(True)
        if seen.get("off_before"):
            gc.disable()
        try:
            return real_with_volumes(self, *args, **kwargs)
        finally:
            inside.pop()
            seen.setdefault("after", []).append(gc.isenabled())
            gc.enable()

    monkeypatch.setattr(storage_module, "perf_volume_objects", perf_volume_objects)
    monkeypatch.setattr(Scheduler, "add_object", add_object)
    monkeypatch.setattr(objects_module, "_field_copier", field_copier)
    monkeypatch.setattr(WorkloadOps, "_with_volumes", with_volumes)
    return seen


def test_the_volume_objects_are_made_with_the_collector_paused_and_it_is_on_again_after(seen):
    assert gc.isenabled()
    result = _run()
    assert result.status == "passed" and result.pods_scheduled == 2, result.reason
    # the op's 2 pods: one derivation, a claim and a PV each, a clone each; all with the collector off
    assert seen["objects"] == [False]
    assert seen["add_object"] == [False] * 4
    assert seen["clone"] == [False] * 2
    assert seen["after"] == [True]
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(seen):
    seen["off_before"].append(True)   # (the runner turns it on after each op: off for the op's _with_volumes)
    result = _run()
    assert result.status == "passed", result.reason
    assert seen["objects"] == [False]
    assert seen["after"] == [False]


def test_an_op_failing_while_the_objects_are_made_turns_the_collector_on_again(seen, monkeypatch):
    def broken(*args, **kwargs):
        seen["objects"].append(gc.isenabled())
        raise ValueError("no room for volume 7")

    monkeypatch.setattr(storage_module, "perf_volume_objects", broken)
    result = _run()
    assert result.status == "failed" and "no room for volume 7" in result.reason
    assert seen["objects"] == [False]
    assert seen["after"] == [True]
    assert gc.isenabled()
