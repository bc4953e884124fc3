"""Properties of the loop with misbehaving extenders, drawn by hypothesis, alone or beside a
misbehaving plugin (``test_loop_properties``): an extender that fails at filter, prioritize, bind or
preempt — by raising, or by answering what it may answer but the scheduler must cope with (every
node rejected, rejected as unresolvable, half the nodes dropped, scores for nodes it was not sent,
no victims, a node with an empty victim list) — always, once or every other call, ignorable or not,
interested in every pod or in half of them, with 1..40 pods of three priorities on 1..12 nodes, in
two waves (``run()`` after each: the second wave's pods preempt the first's, calling the extender).

Whatever they do, ``run()`` (no ``until``) returns by itself; every pod handed over ends with one
final result — bound, unschedulable or in error with a message naming the cause, or deleted as a
preemption's victim — none is lost or left in flight; no node holds more than it can; the cache
holds exactly the bound pods; and the same seed gives the same outcome.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.extender.extender import Extender, ExtenderError, Victims
from fastsched.runtime import Registry
from fastsched.scheduler.result import DELETED, ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_node, make_pod

from .test_loop_properties import FAILURES as PLUGIN_FAILURES
from .test_loop_properties import NAME as PLUGIN, POINTS, WHEN, Case, _config, _plugin_class

EXT = "flaky"
#: per verb, how the extender misbehaves (besides raising)
VERB_FAILURES = {
    "filter": ("raise", "reject-all", "unresolvable-all", "drop-half"),
    "prioritize": ("raise", "unknown-nodes", "out-of-range"),
    "bind": ("raise",),
    "preempt": ("raise", "no-victims", "empty-victims"),
}
#: the CPU (millicores) of each node
NODE_MILLIS = 2000
GUARD_ATTEMPTS = 20_000


@dataclasses.dataclass(frozen=True)
class ExtCase:
    verb: str
    failure: str
    when: str
    ignorable: bool
    everyone: bool                      # interested in every pod, else in the even-numbered ones
    n_nodes: int
    pods: tuple[tuple[int, int, int], ...]  # (CPU millicores, priority, wave) per pod
    plugin: Case | None                 # a misbehaving plugin beside it, or none


class _Flaky(Extender):
    """An in-process extender (the Extender interface the HTTP one implements) that misbehaves."""

    def __init__(self, case: ExtCase):
        self.case, self.calls = case, {v: 0 for v in VERB_FAILURES}
        self.bound: list[tuple[str, str]] = []  # (pod name, node) it bound

    def _misbehaves(self, verb: str) -> bool:
        if verb != self.case.verb:
            return False
        self.calls[verb] += 1
        n, when = self.calls[verb], self.case.when
        return when == "always" or (when == "once" and n == 1) or (when == "every-other" and n % 2 == 1)

    def _raise_if_asked(self, verb: str) -> bool:
        misbehaves = self._misbehaves(verb)
        if misbehaves and self.case.failure == "raise":
            raise ExtenderError(f"extender {EXT!r}: {verb} is down")
        return misbehaves

    def name(self) -> str:
        return EXT

    def is_interested(self, pod: Any) -> bool:
        return self.case.everyone or int(pod.name[1:]) % 2 == 0

    @property
    def filter_verb(self) -> str:
        return "filter"

    @property
    def prioritize_verb(self) -> str:
        return "prioritize"

    def filter(self, pod: Any, nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        names = list(nodes.names) if hasattr(nodes, "names") else [n.node().name for n in nodes]
        if not self._raise_if_asked("filter"):
            return nodes, {}, {}
        failure = self.case.failure
        if failure == "reject-all":
            return nodes.select([]) if hasattr(nodes, "select") else [], {n: "flaky says no" for n in names}, {}
        if failure == "unresolvable-all":
            return (nodes.select([]) if hasattr(nodes, "select") else [], {},
                    {n: "flaky says never" for n in names})
        keep = list(range(0, len(names), 2))  # drop-half
        kept = nodes.select(keep) if hasattr(nodes, "select") else [nodes[i] for i in keep]
        return kept, {names[i]: "flaky dropped it" for i in range(1, len(names), 2)}, {}

    def prioritize(self, pod: Any, nodes: Any) -> tuple[dict[str, int], int]:
        names = list(nodes.names) if hasattr(nodes, "names") else [n.node().name for n in nodes]
        if not self._raise_if_asked("prioritize"):
            return {n: i % 11 for i, n in enumerate(names)}, 1
        if self.case.failure == "unknown-nodes":
            return {"no-such-node": 10}, 1
        return {n: 10**6 for n in names}, 1  # out of [0, 10]

    def bind(self, pod: Any, node_name: str) -> None:
        self._raise_if_asked("bind")
        self.bound.append((pod.name, node_name))

    def is_binder(self) -> bool:
        return self.case.verb == "bind"

    def supports_preemption(self) -> bool:
        return self.case.verb == "preempt"

    def process_preemption(self, pod: Any, node_name_to_victims: dict[str, Victims], node_infos: Any
                           ) -> dict[str, Victims]:
        if not self._raise_if_asked("preempt"):
            return node_name_to_victims
        if self.case.failure == "no-victims":
            return {}
        return {name: Victims([], 0) for name in node_name_to_victims}

    def is_ignorable(self) -> bool:
        return self.case.ignorable


def run_case(case: ExtCase, seed: int = 11):
    """Build and run the case: (scheduler, the extender, results)."""
    ext = _Flaky(case)
    if case.plugin is not None:
        plugin_case = case.plugin
        s = Scheduler(_config(plugin_case), registry=Registry(
            {PLUGIN: lambda args, handle: _plugin_class(plugin_case.point)(plugin_case, handle)}),
            seed=seed, extenders=[ext])
    else:
        s = Scheduler(seed=seed, extenders=[ext])
    s.add_nodes([make_node(f"n{i}", cpu=f"{NODE_MILLIS}m") for i in range(case.n_nodes)])
    results: list = []
    for wave in (0, 1):  # the second wave's higher-priority pods preempt the first's
        s.add_pods([make_pod(f"p{i}", cpu=f"{m}m", priority=prio)
                    for i, (m, prio, w) in enumerate(case.pods) if w == wave])
        results = s.run(max_attempts=GUARD_ATTEMPTS)
    return s, ext, results


@st.composite
def ext_cases(draw):
    verb = draw(st.sampled_from(sorted(VERB_FAILURES)))
    failure = draw(st.sampled_from(VERB_FAILURES[verb]))
    n_pods = draw(st.integers(1, 40))
    pods = tuple(draw(st.lists(st.tuples(st.sampled_from([250, 500, 1000, 1500, 3000]), st.sampled_from([0, 100, 1000]),
                                         st.sampled_from([0, 1])), min_size=n_pods, max_size=n_pods)))
    plugin = None
    if draw(st.booleans()):  # a misbehaving plugin too (no Permit waits: they only slow the run)
        point = draw(st.sampled_from(sorted(POINTS)))
        failures = [f for f in PLUGIN_FAILURES if f not in ("wait", "wait-then-allow")]
        plugin = Case(point, draw(st.sampled_from(failures)), draw(st.sampled_from(WHEN)), n_pods, 1,
                      tuple(m for m, _, _ in pods))
    return ExtCase(verb, failure, draw(st.sampled_from(WHEN)), draw(st.booleans()), draw(st.booleans()),
                   draw(st.integers(1, 12)), pods, plugin)


def outcome(results):
    return [(r.pod.name, r.status, r.node_name if r.status == SCHEDULED else None, r.message, r.attempts)
            for r in results]


def check_properties(case: ExtCase) -> None:
    s, ext, results = run_case(case)
    attempts = sum(r.attempts for r in results)
    assert attempts < GUARD_ATTEMPTS, f"run() did not end by itself: {attempts} attempts"

    # one final result per pod handed over, none lost, none left in flight or waiting
    assert len(results) == len(case.pods) and len({r.pod.uid for r in results}) == len(case.pods)
    for r in results:
        assert r.status in (SCHEDULED, UNSCHEDULABLE, ERROR, DELETED), (r.pod.name, r.status, r.message)
        assert r.message, r.pod.name
        if r.status == SCHEDULED:
            assert r.message == f"Successfully assigned default/{r.pod.name} to {r.node_name}"
        elif r.status == ERROR:
            # only the extender and the plugin err here: the message names one of them
            assert EXT in r.message or PLUGIN in r.message or "no Bind plugin bound pod" in r.message \
                or "expected at least one victim pod" in r.message, r.message
        elif r.status == UNSCHEDULABLE:
            assert r.message.startswith(f"0/{case.n_nodes} nodes are available"), r.message
    if case.verb == "bind" and not case.ignorable:
        # the extender is the binder of the pods it is interested in: such a pod is bound only if
        # the extender's bind succeeded (to the node it was bound to)
        bound = dict(ext.bound)
        for r in results:
            if r.status == SCHEDULED and ext.is_interested(r.pod):
                assert bound.get(r.pod.name) == r.node_name, (r.pod.name, r.node_name, bound.get(r.pod.name))

    # no node holds more than it can; the cache holds exactly the bound pods
    used: dict[str, int] = {}
    for r in results:
        if r.status == SCHEDULED:
            used[r.node_name] = used.get(r.node_name, 0) + case.pods[int(r.pod.name[1:])][0]
    assert all(m <= NODE_MILLIS for m in used.values()), used
    assert s.cache.pod_count() == sum(r.status == SCHEDULED for r in results)
    assert not s._waiting

    # one seed, one outcome
    _, _, again = run_case(case)
    assert outcome(again) == outcome(results)


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(ext_cases())
def test_misbehaving_extenders_never_lose_a_pod(case):
    check_properties(case)


def _waves(n: int = 24) -> tuple[tuple[int, int, int], ...]:
    """16 low-priority pods, then 8 high-priority ones that must preempt some of them (4 nodes)."""
    return tuple((500 if i % 3 else 1000, 0 if i < 16 else 1000, 0 if i < 16 else 1) for i in range(n))


@pytest.mark.parametrize("verb,failure,ignorable,want", [
    # a failing filter or binder that may not be ignored fails every pod, naming itself
    ("filter", "raise", False, {ERROR: 24}),
    ("bind", "raise", False, {ERROR: 24}),
    # ignored, it changes nothing: the second wave preempts
    ("filter", "raise", True, {SCHEDULED: 13, DELETED: 7, UNSCHEDULABLE: 4}),
    ("bind", "raise", True, {SCHEDULED: 13, DELETED: 7, UNSCHEDULABLE: 4}),
    # a preemption extender that fails (or answers a node without victims) stops the preemption
    ("preempt", "raise", False, {SCHEDULED: 12, UNSCHEDULABLE: 12}),
    ("preempt", "empty-victims", False, {SCHEDULED: 12, UNSCHEDULABLE: 12}),
])
def test_named_cases(verb, failure, ignorable, want):
    case = ExtCase(verb, failure, "always", ignorable, True, 4, _waves(), None)
    s, ext, results = run_case(case)
    assert Counter(r.status for r in results) == want
    messages = {r.message for r in results if r.status in (ERROR, UNSCHEDULABLE) and int(r.pod.name[1:]) >= 16}
    if not ignorable and verb in ("filter", "bind"):
        assert messages == {f"extender 'flaky': {verb} is down"}
    if not ignorable and verb == "preempt":
        want_text = "preempt is down" if failure == "raise" else "expected at least one victim pod on node"
        assert any(want_text in m for m in messages), messages
    check_properties(case)
