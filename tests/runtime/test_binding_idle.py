"""``binding_idle_on_pre_filter_skip``: a plugin declaring it is not called at Reserve, Unreserve,
PreBindPreFlight and PreBind for a pod its PreFilter skipped. Each declaration is checked against
the plugin itself (its calls answer what the framework assumes), and whole runs agree with the
declarations honoured and ignored, on the oracle's seeded volume, DRA and mixed scenarios."""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.framework import Code, CycleState
from fastsched.testing.oracle_scenarios import generate

SEEDS = range(12)
CLASSES = ("volumes", "dra", "mixed")


def _scheduler(scenario: dict) -> Scheduler:
    s = Scheduler(load_config(scenario["config"]), seed=int(scenario.get("seed", 0)), clock=VirtualClock(start=1e9))
    s.add(list(scenario.get("objects", ())))
    s.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        s.add(list(scenario["pods"]))
    return s


def _declaring(s: Scheduler) -> list:
    return [pl for fw in s.profiles.values() for pl in fw.reserve_plugins + fw.pre_bind_plugins
            if getattr(pl, "binding_idle_on_pre_filter_skip", False)]


def test_the_default_profile_declares_volume_binding_and_dynamic_resources():
    names = {pl.name() for pl in _declaring(Scheduler())}
    assert names == {"VolumeBinding", "DynamicResources"}


@pytest.mark.parametrize("cls", CLASSES)
def test_each_declaration_holds_for_the_pods_its_pre_filter_skips(cls):
    checked = 0
    for seed in SEEDS:
        scenario = generate(cls, seed)
        s = _scheduler(scenario)
        s.add(list(scenario["incoming"]))
        nodes = s.snapshot.batch()
        node_names = [n.node().name for n in list(nodes)[:2]]
        for pod in [p for p in s.cluster.pods.values() if not p.node_name]:
            for pl in _declaring(s):
                if not hasattr(pl, "pre_filter"):
                    continue
                state = CycleState()
                _, st = pl.pre_filter(state, pod, nodes)
                if st is None or st.code() != Code.SKIP:
                    continue
                for node_name in node_names:
                    assert pl.reserve(state, pod, node_name) is None, (pl.name(), pod.key)
                    if hasattr(pl, "pre_bind_pre_flight"):
                        assert pl.pre_bind_pre_flight(state, pod, node_name).code() == Code.SKIP
                    if hasattr(pl, "pre_bind"):
                        assert pl.pre_bind(state, pod, node_name) is None, (pl.name(), pod.key)
                    assert pl.unreserve(state, pod, node_name) is None
                    checked += 1
    assert checked > 0


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("nnn_for_expectation", [True, False], ids=["pre-flights", "no-pre-flights"])
def test_runs_agree_with_the_declarations_honoured_and_ignored(cls, nnn_for_expectation, monkeypatch):
    def outcomes(honoured: bool) -> list:
        from fastsched.plugins import dynamicresources, volumebinding
        monkeypatch.setattr(volumebinding.VolumeBinding, "binding_idle_on_pre_filter_skip", honoured)
        monkeypatch.setattr(dynamicresources.DynamicResources, "binding_idle_on_pre_filter_skip", honoured)
        out = []
        for seed in SEEDS:
            scenario = generate(cls, seed)
            s = _scheduler(scenario)
            s._pre_flights = nnn_for_expectation
            s.add(list(scenario["incoming"]))
            out.append([(r.pod.key, r.status, r.node_name, r.message, r.nominated_node_name) for r in s.run()])
        return out

    honoured, ignored = outcomes(True), outcomes(False)
    assert honoured == ignored
    assert any(status == "Scheduled" for run in honoured for _, status, *_ in run)
