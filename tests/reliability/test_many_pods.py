"""Reliability with many pods (50..200), drawn by hypothesis: nodes deleted in the middle of a run
(by a plugin at Reserve, Permit, PreBind or PostBind: the pod's own node or another), a PreEnqueue
plugin that raises, and ``explain`` against what ``run`` then does, pod by pod.

Whatever the draw, ``run()`` returns by itself; every pod ends with one result that names its cause
(bound with upstream's "Successfully assigned", unschedulable with a FitError or "no nodes available
to schedule pods", or held by PreEnqueue with the plugin and its error); the cache holds exactly the
bound pods (a pod bound to a node deleted afterwards stays, as upstream's cache keeps the node's
pods until they are deleted); no node holds more than it can, also once the deleted nodes come back
and a second wave of pods runs. Small example counts, derandomized:
the suite runs them in a few seconds (``test_loop_properties*`` draw the misbehaving plugins on
1..50 pods; this is the many-pod and node-deletion side).
"""
from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.runtime import Registry
from fastsched.scheduler.result import GATED, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import config_enabling, make_node, make_pod

NAME = "Chaos"
GUARD_ATTEMPTS = 50_000
NODE_MILLIS = 4000
MILLIS = (100, 250, 500, 1000, 3000, 5000)  # 5000: never fits a node (FitError, PostFilter)
YAML_POINT = {"reserve": "reserve", "permit": "permit", "pre_bind": "preBind", "post_bind": "postBind",
              "pre_enqueue": "preEnqueue"}
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@dataclasses.dataclass(frozen=True)
class Case:
    point: str
    when: str  # always / once / every-other / random
    own_node: bool  # delete the pod's own node (else another, drawn)
    n_pods: int
    n_nodes: int
    seed: int


def _plugin(case: Case, sched_box: list) -> type:
    rng = random.Random(case.seed)

    class Chaos:
        def __init__(self, args, handle):
            self.calls = 0

        def name(self):
            return NAME

        def _misbehaves(self) -> bool:
            self.calls += 1
            return (case.when == "always" or (case.when == "once" and self.calls == 1)
                    or (case.when == "every-other" and self.calls % 2 == 1)
                    or (case.when == "random" and rng.random() < 0.3))

        def _delete_a_node(self, node: str) -> None:
            s = sched_box[0]
            names = [n.name for n in s.nodes()]
            victim = node if case.own_node else (rng.choice(names) if names else "")
            if victim in names:
                s.delete_node(victim)  # from inside the run: the informer's delete, mid-cycle

        def pre_enqueue(self, pod):
            if self._misbehaves():
                raise RuntimeError("pre-enqueue on fire")
            return None

        def reserve(self, state, pod, node):
            if self._misbehaves():
                self._delete_a_node(node)
            return None

        def unreserve(self, state, pod, node):
            return None

        def permit(self, state, pod, node):
            if self._misbehaves():
                self._delete_a_node(node)
            return None, 0

        def pre_bind(self, state, pod, node):
            if self._misbehaves():
                self._delete_a_node(node)
            return None

        def post_bind(self, state, pod, node):
            if self._misbehaves():
                self._delete_a_node(node)

    return Chaos


def run_case(case: Case):
    box: list = []
    s = Scheduler(config_enabling(NAME, YAML_POINT[case.point]), registry=Registry({NAME: _plugin(case, box)}), seed=case.seed)
    box.append(s)
    rng = random.Random(case.seed)
    millis = [rng.choice(MILLIS) for _ in range(case.n_pods)]
    s.add_nodes([make_node(f"n{i}", cpu=f"{NODE_MILLIS}m") for i in range(case.n_nodes)])
    s.add_pods([make_pod(f"p{i}", cpu=f"{m}m") for i, m in enumerate(millis)])
    return s, s.run(max_attempts=GUARD_ATTEMPTS), millis


def check(case: Case) -> None:
    s, results, millis = run_case(case)
    assert sum(r.attempts for r in results) < GUARD_ATTEMPTS, "run() did not end by itself"
    assert len(results) == case.n_pods and len({r.pod.uid for r in results}) == case.n_pods
    live = {n.name for n in s.nodes()}
    used: dict[str, int] = {}
    for r in results:
        i = int(r.pod.name[1:])
        if r.status == SCHEDULED:
            assert r.message == f"Successfully assigned default/{r.pod.name} to {r.node_name}"
            used[r.node_name] = used.get(r.node_name, 0) + millis[i]
        elif r.status == UNSCHEDULABLE:
            assert (r.message.startswith(f"0/{len(live)} nodes are available")
                    or r.message == "no nodes available to schedule pods"), (r.pod.name, r.message)
        else:
            assert r.status == GATED and case.point == "pre_enqueue", (r.pod.name, r.status, r.message)
            assert r.message == f'rejected by PreEnqueue plugin "{NAME}": RuntimeError: pre-enqueue on fire'
            assert s.explain(r.pod).gated == r.message
    assert all(m <= NODE_MILLIS for m in used.values()), used
    assert s.cache.pod_count() == sum(r.status == SCHEDULED for r in results)
    assert not s._waiting
    if case.point != "pre_enqueue":
        # the deleted nodes come back (a kubelet registers again): they still carry the pods bound
        # to them (the cache's ghost pods), so a second wave may not overfill them
        gone = [f"n{i}" for i in range(case.n_nodes) if f"n{i}" not in live]
        s.add_nodes([make_node(name, cpu=f"{NODE_MILLIS}m") for name in gone])
        wave = [make_pod(f"w{i}", cpu="1000m") for i in range(4 * case.n_nodes)]
        s.add_pods(wave)
        again = s.run(max_attempts=GUARD_ATTEMPTS)
        used2: dict[str, int] = {}
        for r in again:
            if r.status == SCHEDULED:
                m = 1000 if r.pod.name.startswith("w") else millis[int(r.pod.name[1:])]
                used2[r.node_name] = used2.get(r.node_name, 0) + m
        assert all(m <= NODE_MILLIS for m in used2.values()), (used2, gone)
    if case.point == "pre_enqueue" and case.when == "always":
        assert all(r.status == GATED for r in results)
    if case.point != "pre_enqueue" and case.when == "always" and case.own_node:
        # each binding deletes its node: a node takes one pod, then no other
        assert len(used) == sum(1 for r in results if r.status == SCHEDULED) <= case.n_nodes


@st.composite
def cases(draw, points):
    return Case(draw(st.sampled_from(points)), draw(st.sampled_from(("always", "once", "every-other", "random"))),
                draw(st.booleans()), draw(st.integers(50, 200)), draw(st.integers(2, 20)), draw(st.integers(0, 99)))


@SETTINGS
@given(cases(("reserve", "permit", "pre_bind", "post_bind")))
def test_nodes_deleted_mid_run_lose_no_pod(case):
    check(case)


@SETTINGS
@given(cases(("pre_enqueue",)))
def test_a_pre_enqueue_plugin_that_raises_holds_pods_with_its_error(case):
    check(case)


def test_a_node_deleted_at_permit_every_time_ends_with_no_nodes():
    """The edge the draws reach only sometimes: every Permit deletes the pod's node, so each node
    takes one pod and the pods after the last node say upstream's ErrNoNodesAvailable."""
    case = Case("permit", "always", True, 60, 5, 1)
    check(case)
    _, results, _ = run_case(case)
    assert sum(r.status == SCHEDULED for r in results) == 5
    assert sum(r.message == "no nodes available to schedule pods" for r in results) > 0


def test_a_pre_enqueue_plugin_that_always_raises_holds_every_pod():
    case = Case("pre_enqueue", "always", False, 120, 4, 3)
    check(case)
    s, results, _ = run_case(case)
    assert [r.status for r in results] == [GATED] * 120 and s.cache.pod_count() == 0
