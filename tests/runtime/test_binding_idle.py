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


def _volume_binding(s: Scheduler):
    return next(pl for pl in s.profiles["default-scheduler"].reserve_plugins if pl.name() == "VolumeBinding")


def _assumed(pl) -> tuple:
    return dict(pl.binder.pv_cache._assumed), dict(pl.binder.pvc_cache._assumed)


def _storage_schedulers(source: str):
    """Schedulers with their incoming pods added: the oracle's seeded volume scenarios, or
    :func:`storage_check_scenario`'s random storage clusters."""
    from fastsched.testing import storage_check_scenario

    for seed in SEEDS:
        if source == "oracle":
            scenario = generate("volumes", seed)
            s = _scheduler(scenario)
            s.add(list(scenario["incoming"]))
        else:
            sc = storage_check_scenario(seed, nodes=8, claims=30, pvs=24)
            s = Scheduler(seed=seed)
            s.add(sc.objects)
            s.add_nodes(sc.nodes)
            s.add_pods(sc.running + sc.incoming)
        yield s


@pytest.mark.parametrize("source", ("oracle", "storage"))
def test_volume_bindings_judgement_agrees_with_its_calls(source):
    """``VolumeBinding.binding_idle`` (every claim bound: upstream's AllBound) against the calls
    it stands for, on the oracle's seeded scenarios (bound, WaitForFirstConsumer, Immediate and
    missing claims, PVs with and without affinity): two cycle states from the same PreFilter and
    Filter; where the judgement on one answers True, Reserve on the other answers Success with
    ``all_bound`` set and assumes nothing, and on the judged state PreBindPreFlight answers Skip,
    PreBind Success and Unreserve restores nothing; where it answers False, Reserve works (it
    assumes bindings or provisions, or fails) or the node's PodVolumes are not empty. Both answers
    occur."""
    idle = busy = 0
    for s in _storage_schedulers(source):
        pl = _volume_binding(s)
        nodes = list(s.snapshot.batch())
        for pod in [p for p in s.cluster.pods.values() if not p.node_name]:
            states = []
            for _ in range(2):
                state = CycleState()
                _, st = pl.pre_filter(state, pod, nodes)
                states.append(state)
            if st is not None:
                continue
            for ni in nodes[:3]:
                node_name = ni.node().name
                judged, reserved = states
                if any(pl.filter(state, pod, ni) is not None for state in states):
                    continue
                before = _assumed(pl)
                answer = pl.binding_idle(judged, pod, node_name)
                assert _assumed(pl) == before
                st = pl.reserve(reserved, pod, node_name)
                if answer:
                    idle += 1
                    assert st is None and reserved.read("VolumeBinding").all_bound
                    assert judged.read("VolumeBinding").all_bound
                    assert _assumed(pl) == before, pod.key
                    assert pl.pre_bind_pre_flight(judged, pod, node_name).code() == Code.SKIP
                    assert pl.pre_bind(judged, pod, node_name) is None
                    pl.unreserve(judged, pod, node_name)
                    assert _assumed(pl) == before
                else:
                    busy += 1
                    volumes = reserved.read("VolumeBinding").pod_volumes_by_node.get(node_name)
                    assert (st is not None or not reserved.read("VolumeBinding").all_bound
                            or (volumes is not None and (volumes.static_bindings or volumes.dynamic_provisions)))
                    pl.unreserve(reserved, pod, node_name)
                    assert _assumed(pl) == before
    assert idle > 0 and busy > 0, (idle, busy)


def test_a_subclass_overriding_reserve_is_not_judged():
    from fastsched.plugins.volumebinding import VolumeBinding

    class Custom(VolumeBinding):
        def reserve(self, state, pod, node_name):
            return super().reserve(state, pod, node_name)

    assert VolumeBinding()._idle_judgeable
    assert not Custom()._idle_judgeable
    assert not Custom().binding_idle(CycleState(), None, "n0")
