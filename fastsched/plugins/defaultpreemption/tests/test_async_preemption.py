"""Asynchronous preemption (SchedulerAsyncPreemption, beta and on by default in v1.34).

Upstream's ``prepareCandidateAsync`` (``framework/preemption/preemption.go``) and DefaultPreemption's
PreEnqueue / EventsToRegister: the preemptor is nominated at once; the API calls (clear the
lower-priority nominations, evict every victim but the last, leave the preempting set, evict the
last) land ``api_delay`` seconds of virtual time later; PreEnqueue holds the preemptor meanwhile.
"""
from __future__ import annotations

import random
import types

import pytest

from fastsched.features import FeatureGates
from fastsched.framework import Code
from fastsched.framework.types import NominatingInfo, NominatingMode, PodInfo
from fastsched.plugins.defaultpreemption import NAME, WAITING_FOR_PREEMPTION, new
from fastsched.scheduler.backend.queue.nominator import Nominator
from fastsched.testing import make_node, make_pod, random_cluster, random_pod

from .support import HIGH, LOW, Setup, assert_placed, node, pod, unschedulable_on
from .test_vectorized import ADDITIVE, pre_filters, scenario, status_tuple

SYNC = FeatureGates({"SchedulerAsyncPreemption": False})


# ------------------------------------------------------------------------------------------------
# the gate
# ------------------------------------------------------------------------------------------------
def test_the_gate_is_read_from_the_handle():
    assert new(None, None).enable_async_preemption  # v1.34's default
    assert not new(None, types.SimpleNamespace(feature_gates=SYNC)).enable_async_preemption
    # a plain mapping works too
    assert not new(None, types.SimpleNamespace(feature_gates={"SchedulerAsyncPreemption": False})
                   ).enable_async_preemption
    s = Setup([node("n1", cpu="1", memory="1")], [], pod("p"), async_preemption=True)
    assert s.fw.feature_gates.enabled("SchedulerAsyncPreemption") and s.plugin.enable_async_preemption
    s = Setup([node("n1", cpu="1", memory="1")], [], pod("p"))
    assert not s.fw.feature_gates.enabled("SchedulerAsyncPreemption") and not s.plugin.enable_async_preemption
    with pytest.raises(ValueError):
        s.plugin.api_delay = -1


# ------------------------------------------------------------------------------------------------
# one preemption
# ------------------------------------------------------------------------------------------------
def _three_victims(**kw) -> Setup:
    """node1 (500m) holds three low-priority pods (started at 1, 2, 3); the preemptor needs it all.
    A lower-priority pod is nominated to node1."""
    running = [pod(f"v{i}", node_name="node1", priority=LOW, req={"cpu": "150m", "memory": "10"}, start=float(i))
               for i in (1, 2, 3)]
    nominated = {"node1": [pod("low-nominated", priority=LOW - 1, req={"cpu": "10m"}, nominated="node1")]}
    return Setup([node("node1", cpu="500m", memory="500")], running,
                 pod("p", priority=HIGH, req={"cpu": "500m", "memory": "10"}), nominated=nominated, **kw)


def _record_calls(s: Setup) -> list:
    """Log every API call of the preemption, with whether the preemptor was preempting then."""
    calls: list = []
    evaluator = s.plugin.evaluator
    client = s.client
    assert client is not None
    preempt, clear = client.preempt_pod, client.clear_nominated_node_name

    def preempt_pod(victim, preemptor, node_name):
        calls.append(("evict", victim.name, evaluator.is_pod_running_preemption(preemptor.uid), s.fw.clock.now()))
        preempt(victim, preemptor, node_name)

    def clear_nominated_node_name(p):
        calls.append(("clear", p.name, evaluator.is_pod_running_preemption("p"), s.fw.clock.now()))
        clear(p)

    # the test wraps the fake's calls on the instance
    client.preempt_pod = preempt_pod  # type: ignore[method-assign]
    client.clear_nominated_node_name = clear_nominated_node_name  # type: ignore[method-assign]
    return calls


def test_sync_preemption_evicts_inside_post_filter():
    s = _three_victims()
    calls = _record_calls(s)
    result, status = s.post_filter(unschedulable_on("node1"))
    assert_placed(status, "node1", 3)
    assert result.nominating_info.nominated_node_name == "node1"
    assert [c[:2] for c in calls] == [("evict", "v1"), ("evict", "v2"), ("evict", "v3"), ("clear", "low-nominated")]
    assert s.plugin.pre_enqueue(s.pod) is None


def test_async_preemption_nominates_at_once_and_evicts_after_the_delay():
    s = _three_victims(async_preemption=True)
    s.plugin.api_delay = 5
    calls = _record_calls(s)
    result, status = s.post_filter(unschedulable_on("node1"))
    # nominated at once; nothing evicted yet; PreEnqueue holds the preemptor
    assert_placed(status, "node1", 3)
    assert result.nominating_info.nominated_node_name == "node1"
    assert calls == [] and s.client.preempted == []
    gated = s.plugin.pre_enqueue(s.pod)
    assert gated.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and gated.message() == WAITING_FOR_PREEMPTION
    assert gated.message() == "waiting for the preemption for this pod to be finished"  # upstream's words
    assert s.plugin.pre_enqueue(pod("other", priority=HIGH)) is None
    s.fw.clock.advance(4.999)
    assert calls == []
    s.fw.clock.advance(0.001)
    # upstream's order: clear the nominations, every victim but the last (still preempting), leave
    # the preempting set, the last victim
    assert calls == [("clear", "low-nominated", True, 5.0), ("evict", "v1", True, 5.0), ("evict", "v2", True, 5.0),
                     ("evict", "v3", False, 5.0)]
    assert s.plugin.pre_enqueue(s.pod) is None
    assert s.fw.clock.pending() == 0


def test_async_preemption_with_no_delay_completes_in_post_filter():
    s = _three_victims(async_preemption=True)
    calls = _record_calls(s)
    s.post_filter(unschedulable_on("node1"))
    assert [c[:3] for c in calls] == [("clear", "low-nominated", True), ("evict", "v1", True), ("evict", "v2", True),
                                      ("evict", "v3", False)]
    assert s.plugin.pre_enqueue(s.pod) is None and s.fw.clock.pending() == 0


def test_victims_gone_or_terminating():
    s = _three_victims(async_preemption=True)
    s.plugin.api_delay = 1
    activated: list = []
    s.fw.set_pod_activator(types.SimpleNamespace(activate=lambda pods: activated.append(sorted(pods))))
    s.post_filter(unschedulable_on("node1"))
    del s.client.pods["v2"]  # deleted by someone else meanwhile: its status patch answers NotFound
    s.fw.clock.advance(1)
    # v1.37 executor.go PreemptPod: "Victim Pod is already deleted" is no error: the others are
    # evicted and the preemptor is not activated (v1.34 stopped there and activated it)
    assert s.client.victims == ["v1", "v3"] and activated == []
    assert s.plugin.pre_enqueue(s.pod) is None
    # every victim already terminating: nothing to do, the preemptor is not held
    running = [pod("t1", node_name="node1", priority=LOW, req={"cpu": "500m"}, deleting=True)]
    s = Setup([node("node1", cpu="500m", memory="500")], running, pod("p", priority=HIGH, req={"cpu": "500m"}),
              async_preemption=True)
    s.plugin.api_delay = 1
    result, status = s.post_filter(unschedulable_on("node1"))
    assert_placed(status, "node1", 1)
    assert result.nominating_info.nominated_node_name == "node1"
    assert s.plugin.pre_enqueue(s.pod) is None and s.fw.clock.pending() == 0


def test_an_api_error_stops_the_evictions_and_activates_the_preemptor():
    s = _three_victims(async_preemption=True)
    s.plugin.api_delay = 2
    activated: list = []
    s.fw.set_pod_activator(types.SimpleNamespace(activate=lambda pods: activated.append(sorted(pods))))
    s.client.fail_preempt_of = {"v1"}
    s.post_filter(unschedulable_on("node1"))
    s.fw.clock.advance(2)
    # v1's call failed: upstream cancels the others' context, so the last call (v3) fails too
    assert s.client.victims == [] and activated == [["p"]]
    assert s.plugin.pre_enqueue(s.pod) is None
    # a failure on the last victim: the others are gone, the preemptor is activated as well
    s = _three_victims(async_preemption=True)
    s.plugin.api_delay = 2
    activated.clear()
    s.fw.set_pod_activator(types.SimpleNamespace(activate=lambda pods: activated.append(sorted(pods))))
    s.client.fail_preempt_of = {"v3"}
    s.post_filter(unschedulable_on("node1"))
    s.fw.clock.advance(2)
    assert s.client.victims == ["v1", "v2"] and activated == [["p"]]


# ------------------------------------------------------------------------------------------------
# async vs sync on seeded clusters (one PostFilter each)
# ------------------------------------------------------------------------------------------------
def _setup(seed: int, p, *, async_preemption: bool, delay: float = 0.0) -> Setup:
    nodes, running, snapshot, pdbs, nominated, _ = scenario(seed)
    s = Setup(nodes, running, p, pdbs=pdbs, filters=ADDITIVE, pre_filters=pre_filters(ADDITIVE), seed=seed,
              snapshot=snapshot, async_preemption=async_preemption)
    nominator = Nominator()
    for node_name, pods in nominated.items():
        for q in pods:
            nominator.add_nominated_pod(PodInfo(q), NominatingInfo(node_name, NominatingMode.OVERRIDE))
    s.fw.set_pod_nominator(nominator)
    # the nominated pods exist in the fake API (their nomination can be cleared)
    assert s.client is not None
    s.client.pods.update({q.uid: q for pods in nominated.values() for q in pods})
    s.plugin.api_delay = delay
    return s


def _outcome(s: Setup, p) -> tuple | None:
    state = s.cycle_state()
    statuses = s.filter_statuses(state)
    if s.feasible:
        return None
    result, status = s.plugin.post_filter(state, p, statuses)
    nominated = result.nominating_info.nominated_node_name if result is not None else None
    return nominated, status_tuple(status), s.fw.rng.getstate()


@pytest.mark.parametrize("delay", [0.0, 3.0])
def test_async_and_sync_preemption_choose_the_same_victims_and_nominations(delay):
    preempted = 0
    for seed in range(6):
        *_, preemptors = scenario(seed)
        for p in preemptors:
            sync = _setup(seed, p, async_preemption=False)
            want = _outcome(sync, p)
            if want is None:
                continue
            asyn = _setup(seed, p, async_preemption=True, delay=delay)
            got = _outcome(asyn, p)
            assert got == want, (seed, p.name)
            if delay:
                assert asyn.client.preempted == [] and asyn.client.cleared == []
                asyn.fw.clock.run()
                assert asyn.fw.clock.now() == delay or not sync.client.preempted
            assert asyn.client.preempted == sync.client.preempted, (seed, p.name)
            assert asyn.client.cleared == sync.client.cleared, (seed, p.name)
            assert not asyn.plugin.evaluator.preempting
            preempted += bool(sync.client.preempted)
    assert preempted >= 8, preempted


# ------------------------------------------------------------------------------------------------
# through the scheduler
# ------------------------------------------------------------------------------------------------
def _incoming(rng: random.Random, n: int) -> list:
    """``n`` random pods of priority 0, 100 or 1000 (as random_pod's, not validated: like
    tools/record_placements.py's)."""
    out = []
    for i in range(n):
        p = random_pod(rng, i).replace(priority=rng.choice((0, 100, 1000)))
        p.admitted = True
        out.append(p)
    return out


def _scheduler(seed: int = 0, feature_gates=None):
    from fastsched.scheduler import Scheduler
    return Scheduler(seed=seed, feature_gates=feature_gates)


def _plugin(s):
    return s.profiles["default-scheduler"].plugin(NAME)


def test_pre_enqueue_holds_the_preemptor_until_its_victims_are_gone():
    s = _scheduler()
    s.add_nodes([make_node("n1", cpu="1", memory="1Gi"), make_node("n2", cpu="1", memory="1Gi")])
    s.add_pods([make_pod("low", cpu="800m", priority=0, node_name="n1"),
                make_pod("mid", cpu="600m", priority=10, node_name="n2"),
                make_pod("small", cpu="100m", priority=10, node_name="n2")])
    _plugin(s).api_delay = 5
    high = make_pod("high", cpu="500m", priority=100)
    s.add_pod(high)
    s.run(until=1)
    res = s.results[high.uid]
    assert res.status == "Unschedulable" and res.nominated_node_name == "n1"
    assert "low" in {p.name for p in s.pods.values()}  # not evicted yet
    assert s.queue.where(high.uid) == "unschedulable" and not s.queue.get(high.uid).gated
    # a deletion that NodeResourcesFit's hint finds worth a retry: the preemptor is held at PreEnqueue
    s.delete_pod(next(p for p in s.pods.values() if p.name == "small"))
    qpi = s.queue.get(high.uid)
    assert s.queue.where(high.uid) == "unschedulable" and qpi.gated
    assert qpi.gating_plugin == NAME and qpi.gating_message == WAITING_FOR_PREEMPTION
    s.run(until=4.9)
    assert s.results[high.uid].attempts == 1 and "low" in {p.name for p in s.pods.values()}
    # the victim's deletion at t=5 (the last victim) requeues it; it binds to its nominated node
    s.run()
    res = s.results[high.uid]
    assert res.status == "Scheduled" and res.node_name == "n1" and res.attempts == 2 and res.bound_at == 5.0
    assert "low" not in {p.name for p in s.pods.values()}


def test_victims_go_after_the_delay_in_virtual_time_and_the_run_ends():
    s = _scheduler(seed=3)
    nodes, running = random_cluster(3, 40, 160)
    s.add_nodes(nodes)
    s.add_pods(running)
    delay = 2.5
    _plugin(s).api_delay = delay
    evaluator = _plugin(s).evaluator
    decided: set[tuple] = set()  # (time, preemptor uid, victim name) of each decision
    original = evaluator.prepare_candidate_async

    def prepare(c, p, plugin_name):
        decided.update((s.clock.now(), p.uid, v.name) for v in c.victims.pods)
        original(c, p, plugin_name)

    evaluator.prepare_candidate_async = prepare
    evictions: list = []
    s.preemption_callbacks.append(lambda victim, preemptor, node_name: evictions.append(
        (s.clock.now(), victim.name, preemptor.uid)))
    rng = random.Random(3)
    s.add_pods(_incoming(rng, 150))
    results = s.run()
    assert evictions and decided
    for t, victim, preemptor_uid in evictions:
        assert (t - delay, preemptor_uid, victim) in decided
    assert not evaluator.preempting and s.clock.pending() <= 1  # at most the queue's own flush
    victims = {v for _, v, _ in evictions}
    for r in results:
        assert r.status in ("Scheduled", "Unschedulable", "Error") or (r.status == "Deleted" and r.pod.name in victims)
    assert sum(r.scheduled for r in results) > 50


def _random_burst(seed: int, *, async_preemption: bool) -> tuple:
    gates = FeatureGates({"SchedulerAsyncPreemption": async_preemption})
    s = _scheduler(seed=seed, feature_gates=gates)
    assert _plugin(s).enable_async_preemption == async_preemption
    nodes, running = random_cluster(seed, 60, 240)
    s.add_nodes(nodes)
    s.add_pods(running)
    evictions: list = []
    s.preemption_callbacks.append(lambda v, p, n: evictions.append((s.clock.now(), v.name, p.name, n)))
    rng = random.Random(seed)
    s.add_pods(_incoming(rng, 300))
    results = s.run()
    placements = [(r.pod.name, r.node_name, r.status, r.message, r.attempts, r.nominated_node_name, r.bound_at)
                  for r in results]
    return placements, evictions, s.plugin_rng.getstate(), s.next_start_node_index


@pytest.mark.parametrize("seed", [1, 2])
def test_scheduler_async_with_no_delay_places_as_sync(seed):
    """With instantaneous API calls the asynchronous path's evictions land before the next cycle:
    same victims in the same order, same nominations, same placements as the synchronous path."""
    want = _random_burst(seed, async_preemption=False)
    got = _random_burst(seed, async_preemption=True)
    assert want[1], "no preemption happened"
    assert got[1] == want[1]
    assert got[0] == want[0]
    assert got[2:] == want[2:]


def test_run_ends_when_the_preemptor_or_a_victim_goes_away_meanwhile():
    """tests/scheduler/test_loop_termination.py's concern: run() always ends, with async evictions
    pending, a preemptor deleted before they land, or a victim deleted by someone else."""
    s = _scheduler()
    s.add_nodes([make_node("n1", cpu="1", memory="1Gi"), make_node("n2", cpu="1", memory="1Gi")])
    s.add_pods([make_pod("a1", cpu="400m", priority=0, node_name="n1"),
                make_pod("a2", cpu="400m", priority=0, node_name="n1"),
                make_pod("b1", cpu="900m", priority=0, node_name="n2")])
    _plugin(s).api_delay = 3
    gone = make_pod("gone", cpu="900m", priority=100)
    s.add_pod(gone)
    s.run(until=1)
    assert s.results[gone.uid].nominated_node_name in ("n1", "n2")
    s.delete_pod(gone)                       # the preemptor goes; its evictions still land (upstream too)
    stays = make_pod("stays", cpu="900m", priority=100)
    s.add_pod(stays)
    s.run(until=2)
    for p in list(s.pods.values()):          # someone else deletes one of the pending victims
        if p.name in ("a1", "b1") and p.node_name == s.results[stays.uid].nominated_node_name:
            s.delete_pod(p)
            break
    results = s.run()
    assert s.clock.now() < 400
    by_name = {r.pod.name: r for r in results}
    # "stays" was nominated to n2 with b1 its only (so last) victim. b1's deletion by someone else
    # came while "stays" was preempting: PreEnqueue gated it. When its calls land b1 is gone, which
    # v1.37 skips without an error, so nothing activates "stays" and only an assigned pod's deletion
    # (DefaultPreemption's one event) would move it: it stays Unschedulable, as upstream's would.
    # (v1.34 failed on the gone victim and activated the preemptor, which then fitted.)
    assert by_name["stays"].status == "Unschedulable"
    assert by_name["stays"].nominated_node_name == "n2"
    assert not _plugin(s).evaluator.preempting
    assert s.clock.pending() <= 1


def _burst(delay: float | None) -> tuple:
    """PreemptionBasic in small: 10 nodes of 4 cpu with four 900m low pods each, 10 preemptors of
    3 cpu. ``delay`` None: synchronous preemption."""
    s = _scheduler(feature_gates=SYNC if delay is None else FeatureGates())
    s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(10)])
    s.add_pods([make_pod(f"low-{i}-{j}", cpu="900m", priority=0, node_name=f"n{i}")
                for i in range(10) for j in range(4)])
    if delay is not None:
        _plugin(s).api_delay = delay
    evictions: list = []
    s.preemption_callbacks.append(lambda v, p, n: evictions.append((s.clock.now(), v.name, p.name, n)))
    s.add_pods([make_pod(f"high-{k}", cpu="3", priority=10) for k in range(10)])
    results = s.run()
    high = [(r.pod.name, r.status, r.node_name, r.attempts, r.bound_at) for r in results
            if r.pod.name.startswith("high-")]
    return high, evictions, s.metrics.preemption_victims


@pytest.mark.parametrize("delay", [0.0, 0.5])
def test_many_preemptors_with_a_delay_land_as_with_sync_preemption(delay):
    want_high, want_evictions, want_victims = _burst(None)
    high, evictions, victims = _burst(delay)
    assert all(status == "Scheduled" for _, status, *_ in high)
    assert sorted(node_name for _, _, node_name, _, _ in high) == sorted(f"n{i}" for i in range(10))
    # same nodes and attempts; the bind times are the victims' deletions: with SchedulerPopFromBackoffQ
    # (on) a preemptor requeued by them leaves backoffQ as soon as activeQ is empty, so it binds at
    # once when preemption is synchronous and after the API delay otherwise (without the gate, both
    # waited out the 1 s backoff)
    assert [h[:4] for h in high] == [h[:4] for h in want_high]
    assert {h[4] for h in want_high} == {0.0} and {h[4] for h in high} == {delay}
    assert [e[1:] for e in evictions] == [e[1:] for e in want_evictions]  # same victims, same order
    assert {e[0] for e in evictions} == {delay} and {e[0] for e in want_evictions} == {0.0}
    assert victims == want_victims == 30
