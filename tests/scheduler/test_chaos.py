"""Chaos: plugins and extenders that misbehave at every extension point, on seeded random clusters.

Whatever they do, ``run()`` returns, every pod ends with exactly one result whose message names
the cause, no node holds more than it can, and the same seed gives the same results.
"""
import copy
import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.errors import FastschedError
from fastsched.extender.testing import ReferenceExtender
from fastsched.framework import Code, PreFilterResult, Status
from fastsched.runtime import Registry
from fastsched.scheduler.scheduler import DELETED, ERROR, GATED, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_node, make_pod

FINAL = {SCHEDULED, UNSCHEDULABLE, ERROR, GATED, DELETED}
POINTS = ("pre_enqueue", "pre_filter", "filter", "post_filter", "pre_score", "score", "reserve", "permit",
          "pre_bind", "bind", "post_bind")
CONFIG_POINTS = {"pre_enqueue": "preEnqueue", "pre_filter": "preFilter", "filter": "filter",
                 "post_filter": "postFilter", "pre_score": "preScore", "score": "score", "reserve": "reserve",
                 "permit": "permit", "pre_bind": "preBind", "bind": "bind", "post_bind": "postBind"}


class ChaosPlugin:
    """Answers at every extension point; with probability ``rate`` an answer is wrong: it raises,
    returns the wrong type, an Error, a float or huge score, or waits at Permit."""

    def __init__(self, seed: int, rate: float):
        self.rng = random.Random(seed)
        self.rate = rate

    def name(self):
        return "Chaos"

    def _misbehave(self, point: str):
        if self.rng.random() >= self.rate:
            return None
        choice = self.rng.choice(("raise", "wrong-type", "error", "odd"))
        if choice == "raise":
            raise RuntimeError(f"chaos at {point}")
        if choice == "wrong-type":
            return "ok" if self.rng.random() < 0.5 else 0
        if choice == "error":
            return Status(Code.ERROR, f"chaos error at {point}")
        return "odd"

    def pre_enqueue(self, pod):
        bad = self._misbehave("pre_enqueue")
        return None if bad in (None, "odd") else bad

    def pre_filter(self, state, pod, nodes=None):
        bad = self._misbehave("pre_filter")
        if bad is None:
            return None, None
        if bad == "odd":
            return PreFilterResult(None), None
        return None, bad if isinstance(bad, Status) else (bad, bad)

    def filter(self, state, pod, node_info):
        bad = self._misbehave("filter")
        return None if bad in (None, "odd") else bad

    def post_filter(self, state, pod, statuses):
        bad = self._misbehave("post_filter")
        return None, (Status(Code.UNSCHEDULABLE) if bad in (None, "odd") else bad)

    def pre_score(self, state, pod, nodes):
        bad = self._misbehave("pre_score")
        return None if bad in (None, "odd") else bad

    def score(self, state, pod, node_info):
        bad = self._misbehave("score")
        if bad is None:
            return 50, None
        if bad == "odd":
            return self.rng.choice((50.7, "50", 2**70, -1, True)), None
        return 0, bad if isinstance(bad, Status) else bad

    def score_extensions(self):
        return None

    def reserve(self, state, pod, node_name):
        bad = self._misbehave("reserve")
        return None if bad in (None, "odd") else bad

    def unreserve(self, state, pod, node_name):
        pass

    def permit(self, state, pod, node_name):
        bad = self._misbehave("permit")
        if bad is None:
            return None, 0
        if bad == "odd":
            return Status(Code.WAIT), self.rng.choice((0.5, 5.0, 60.0))
        return bad, 0

    def pre_bind_pre_flight(self, state, pod, node_name):
        return None

    def pre_bind(self, state, pod, node_name):
        bad = self._misbehave("pre_bind")
        return None if bad in (None, "odd") else bad

    def bind(self, state, pod, node_name):
        bad = self._misbehave("bind")
        return Status(Code.SKIP) if bad in (None, "odd") else bad

    def post_bind(self, state, pod, node_name):
        self._misbehave("post_bind")  # its result is ignored upstream; an exception must be too


def chaos_config(extender_url: str | None = None, ignorable: bool = False, http_timeout: str = "200ms") -> str:
    points = "\n".join(f"      {CONFIG_POINTS[p]}: {{enabled: [{{name: Chaos}}]}}" for p in POINTS if p != "bind")
    extender = "" if extender_url is None else f"""
extenders:
  - urlPrefix: "{extender_url}"
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 2
    httpTimeout: {http_timeout}
    ignorable: {"true" if ignorable else "false"}
"""
    return f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
{points}
      bind: {{enabled: [{{name: Chaos}}, {{name: DefaultBinder}}]}}
{extender}"""


def run_chaos(seed: int, rate: float, until: float | None = None, extender_url: str | None = None,
              ignorable: bool = False, http_timeout: str = "200ms"):
    config = load_config(chaos_config(extender_url, ignorable, http_timeout), registry_names=["Chaos"])
    plugin = ChaosPlugin(seed, rate)
    s = Scheduler(config, registry=Registry({"Chaos": lambda args, handle: plugin}), seed=seed)
    rng = random.Random(seed)
    s.add_nodes([make_node(f"n{i}", cpu=str(rng.choice((2, 4, 8))), memory="16Gi", pods="8") for i in range(6)])
    s.add_pods([make_pod(f"p{i}", cpu=rng.choice(("250m", "1", "3")), memory="1Gi",
                         priority=rng.choice((None, 0, 100))) for i in range(40)])
    results = s.run(until=until)
    return s, results


def assert_invariants(s: Scheduler, results) -> None:
    assert len(results) == 40 and len({r.pod.uid for r in results}) == 40
    for r in results:
        assert r.status in FINAL, (r.pod.name, r.status, r.message)
        assert r.message, r.pod.name
        if r.status == ERROR:
            assert "Chaos" in r.message or "chaos" in r.message or "extender" in r.message.lower(), r.message
    for node in s.nodes():
        pods = [p for p in s.pods.values() if p.node_name == node.name]
        assert sum(p.requests.get("cpu", 0) for p in pods) <= node.allocatable["cpu"]
        assert len(pods) <= node.allocatable["pods"]


def outcome(results):
    return [(r.pod.name, r.status, r.node_name, r.message, r.attempts) for r in results]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rate", [0.05, 0.3])
def test_run_ends_and_every_pod_has_one_final_result(seed, rate):
    s, results = run_chaos(seed, rate)
    assert_invariants(s, results)
    again = run_chaos(seed, rate)[1]
    assert outcome(again) == outcome(results)


@pytest.mark.parametrize("seed", range(3))
def test_bounded_runs_keep_retrying_and_still_hold_the_invariants(seed):
    s, results = run_chaos(seed, 0.3, until=900)
    assert s.clock.now() == 900
    assert_invariants(s, results)


#: the "slow" extender answers after SLOW_DELAY seconds, five times the client's timeout (kept short
#: so the ~60 calls that time out cost about a second)
SLOW_TIMEOUT, SLOW_DELAY = "20ms", 0.1


@pytest.mark.parametrize("mode", ["ok", "http500", "garbage", "slow", "error"])
@pytest.mark.parametrize("ignorable", [False, True], ids=["required", "ignorable"])
def test_misbehaving_extenders(mode, ignorable):
    """"ok" answers, but with scores out of int64; the others fail every call ("slow" by answering
    after the client's httpTimeout)."""
    delay = SLOW_DELAY if mode == "slow" else 0.0
    timeout = SLOW_TIMEOUT if mode == "slow" else "200ms"
    with ReferenceExtender(mode=mode, delay=delay, prioritize_scores={"n0": 2**62, "n1": -2**63}) as ext:
        s, results = run_chaos(1, 0.05, extender_url=ext.url, ignorable=ignorable, http_timeout=timeout)
        assert_invariants(s, results)
        assert ext.requests  # the extender was called
        if ignorable and mode != "ok":
            assert any(r.status == SCHEDULED for r in results)  # a failing ignorable extender is skipped
        if mode == "slow" and not ignorable:
            errors = [r.message for r in results if r.status == ERROR]
            assert errors and all("timeout after 0.02s" in m for m in errors if "extender" in m), errors[:3]
            assert any("timeout after 0.02s" in m for m in errors), errors[:3]


class MeddlingPlugin:
    """At every extension point, with probability ``rate``, changes the cluster through its
    handle's client as a plugin (or another component) may while a pod is in its cycle: deletes a
    node, the pod itself or another pod, adds a pod or a node, cordons a node. What the client
    refuses (a pod deleted twice: ``pods "x" not found``) is a FastschedError, as the API's errors."""

    def __init__(self, seed: int, rate: float, handle):
        self.rng = random.Random(seed)
        self.rate = rate
        self.handle = handle
        self.added = 0

    def name(self):
        return "Meddler"

    def _meddle(self, pod):
        if self.rng.random() >= self.rate:
            return
        client = self.handle.client
        what = self.rng.choice(("delete-node", "delete-self", "delete-other", "add-pod", "add-node", "cordon"))
        try:
            if what == "delete-node" and client.nodes():
                client.delete_node(self.rng.choice(client.nodes()).name)
            elif what == "delete-self":
                client.delete_pod(pod)
            elif what == "delete-other":
                others = client.pods_in_namespace("default")
                if others:
                    client.delete_pod(self.rng.choice(others))
            elif what == "add-pod":
                self.added += 1
                client.add_pod(make_pod(f"extra{self.added}", cpu=self.rng.choice(("250m", "1")), memory="1Gi"))
            elif what == "add-node":
                self.added += 1
                client.add_node(make_node(f"new{self.added}", cpu="4", memory="16Gi", pods="8"))
            elif what == "cordon" and client.nodes():
                node = self.rng.choice(client.nodes())
                manifest = copy.deepcopy(dict(node.manifest))
                manifest.setdefault("spec", {})["unschedulable"] = True
                client.update_node(manifest)
        except FastschedError:
            pass  # the API's answer to a request that no longer applies

    def pre_filter(self, state, pod, nodes=None):
        self._meddle(pod)
        return None, None

    def filter(self, state, pod, node_info):
        self._meddle(pod)

    def post_filter(self, state, pod, statuses):
        self._meddle(pod)
        return None, Status(Code.UNSCHEDULABLE)

    def pre_score(self, state, pod, nodes):
        self._meddle(pod)

    def score(self, state, pod, node_info):
        self._meddle(pod)
        return 50, None

    def score_extensions(self):
        return None

    def reserve(self, state, pod, node_name):
        self._meddle(pod)

    def unreserve(self, state, pod, node_name):
        self._meddle(pod)

    def permit(self, state, pod, node_name):
        self._meddle(pod)
        return None, 0

    def pre_bind_pre_flight(self, state, pod, node_name):
        return None

    def pre_bind(self, state, pod, node_name):
        self._meddle(pod)

    def post_bind(self, state, pod, node_name):
        self._meddle(pod)


MEDDLER_POINTS = ("preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind",
                  "postBind")


def run_meddler(seed: int, rate: float):
    points = "\n".join(f"      {p}: {{enabled: [{{name: Meddler}}]}}" for p in MEDDLER_POINTS)
    config = load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
{points}
""", registry_names=["Meddler"])
    s = Scheduler(config, registry=Registry({"Meddler": lambda args, handle: MeddlingPlugin(seed, rate, handle)}),
                  seed=seed)
    rng = random.Random(seed)
    s.add_nodes([make_node(f"n{i}", cpu=str(rng.choice((2, 4, 8))), memory="16Gi", pods="8") for i in range(6)])
    s.add_pods([make_pod(f"p{i}", cpu=rng.choice(("250m", "1", "3")), memory="1Gi",
                         priority=rng.choice((None, 0, 100))) for i in range(30)])
    return s, s.run()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rate", [0.02, 0.2])
def test_plugins_that_change_the_cluster_mid_cycle(seed, rate):
    """Whatever a plugin does to the cluster through its client during a cycle, run() ends, every
    pod it met has exactly one final result, a pod still pending has one, no node that is still
    there holds more than it can, and the same seed gives the same run."""
    s, results = run_meddler(seed, rate)
    uids = [r.pod.uid for r in results]
    assert len(uids) == len(set(uids))
    assert all(r.status in FINAL and r.message for r in results)
    pending = {p.uid for p in s.pods.values() if not p.node_name}
    assert pending <= set(uids)  # no pod left without a result (the added ones included)
    for node in s.nodes():
        pods = [p for p in s.pods.values() if p.node_name == node.name]
        assert sum(p.requests.get("cpu", 0) for p in pods) <= node.allocatable["cpu"]
        assert len(pods) <= node.allocatable["pods"]
    assert outcome(run_meddler(seed, rate)[1]) == outcome(results)
