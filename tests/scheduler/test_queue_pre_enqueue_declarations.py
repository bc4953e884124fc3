"""PreEnqueue plugins that declare how their answer depends on the pod, and the queue's use of it.

``pre_enqueue_pod_only`` (SchedulingGates): the answer is a function of the pod object alone, so
the queue does not ask again for a pod object the plugin let through (``QueuedPodInfo.
pod_only_passed``; a gang's release pass runs every member's plugins). ``pre_enqueue_per_pod_group``
(DefaultPreemption with GenericWorkload, as GangScheduling): asked once per pass over a group's
members. Each shortcut is checked against the same queue asking every plugin every time.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from .test_queue_pod_groups import PG, AllowList, PerGroupGate, _gating_state, gated_queue, member, pod_group


class PodOnlyAllow(AllowList):
    """AllowList declaring its answer a function of the pod object (it reads the labels only)."""

    pre_enqueue_pod_only = True

    def __init__(self, *allow: str, name: str = "podOnly"):
        super().__init__(*allow)
        self._name, self.calls = name, 0

    def name(self) -> str:
        return self._name

    def pre_enqueue(self, pod):
        self.calls += 1
        return super().pre_enqueue(pod)


class Undeclared(PodOnlyAllow):
    pre_enqueue_pod_only = False


def test_a_pod_only_plugin_is_not_asked_again_at_the_release_pass():
    gate, allow = PerGroupGate(3), PodOnlyAllow("allow")
    q = gated_queue(allow, gate)
    q.add_pod_group(pod_group())
    for i in range(3):  # each arrival: the queue's add, then the pass UnscheduledPodAdd's MoveAll runs
        gate.members = i + 1
        q.add(member(f"m{i}"))
        q._run_pre_enqueue_plugins_for_group(q.get_pod_group("ns1", PG))
    entity = q.get_pod_group("ns1", PG)
    # the last pass was the release (the gate open: every member's plugins), which asked only the
    # member never asked (each member once, at its arrival)
    assert not entity.gated and allow.calls == 3
    q._run_pre_enqueue_plugins_for_group(entity)
    assert not entity.gated and allow.calls == 3


def test_a_pod_object_replaced_is_asked_again():
    allow = PodOnlyAllow("allow")
    q = gated_queue(allow)
    q.add_pod_group(pod_group())
    old = member("m0")
    q.add(old)
    entity = q.get_pod_group("ns1", PG)
    assert not entity.gated
    new = old.replace(labels={})  # no longer allowed: the same uid, another object
    q.update(old, new)
    q._run_pre_enqueue_plugins_for_group(entity)
    assert entity.gated and entity.gating_plugin == "podOnly"
    assert [m.gating_message for m in entity.members] == ["pod label not in allowlists"]


def test_two_pod_only_plugins_in_a_profile_are_each_asked():
    """One mark per queued pod: with two such plugins neither is skipped (the second rejects)."""
    first, second = PodOnlyAllow("allow", name="first"), PodOnlyAllow("other", name="second")
    q = gated_queue(first, second)
    assert [e[3] for e in q._pre_enqueue_entries["default-scheduler"]] == [False, False]
    q.add_pod_group(pod_group())
    q.add(member("m0"))
    entity = q.get_pod_group("ns1", PG)
    assert entity.gated and entity.gating_plugin == "second"


@pytest.mark.parametrize("seed", range(20))
def test_passes_with_the_declaration_answer_as_without(seed):
    """Random members (allowed or not), updates that toggle the label (or replace the object with
    an equal one), passes before and after the per-group gate opens: every member's and the
    group's gating state as a queue whose plugin declares nothing, which asks every time."""
    rng = random.Random(seed)
    need = rng.randint(1, 5)
    queues, allows, gates = [], [], []
    for cls in (PodOnlyAllow, Undeclared):
        gate, allow = PerGroupGate(need), cls("allow")
        order = [allow, gate] if seed % 2 else [gate, allow]
        q = gated_queue(*order)
        q.add_pod_group(pod_group())
        queues.append(q)
        allows.append(allow)
        gates.append(gate)
    pods: dict[str, object] = {}
    for step in range(25):
        r = rng.random()
        members = rng.randint(0, 6)
        for g in gates:
            g.members = members
        if r < 0.35 or not pods:
            pod = member(f"m{len(pods)}", allow=rng.random() < 0.8, priority=rng.randint(0, 2))
            pods[pod.name] = pod
            for q in queues:
                q.add(pod)
        elif r < 0.6:
            name = rng.choice(sorted(pods))
            old = pods[name]
            labels = dict(old.labels) if rng.random() < 0.3 else \
                ({} if "allow" in old.labels else {"allow": ""})
            new = pods[name] = old.replace(labels=labels)
            for q in queues:
                q.update(old, new)
        else:
            for q in queues:
                entity = q.get_pod_group("ns1", PG)
                if entity is not None:
                    q._run_pre_enqueue_plugins_for_group(entity)
        a, b = (q.get_pod_group("ns1", PG) for q in queues)
        assert (a is None) == (b is None)
        if a is not None:
            assert _gating_state(a) == _gating_state(b), (seed, step)
    assert allows[0].calls <= allows[1].calls


# -- the in-tree declarations ----------------------------------------------------------------------
def _preemption(generic_workload: bool = True, cls=None):
    from fastsched.features import FeatureGates
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    from fastsched.scheduler.cache import Cache as SchedulerCache
    gates = FeatureGates({"SchedulerAsyncPreemption": True, "GenericWorkload": generic_workload})
    cache = SchedulerCache(generic_workload=True)
    cache.add_pod_group(pod_group().replace(uid="pg-uid"))
    return (cls or DefaultPreemption)(None, SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None))


def test_the_in_tree_declarations():
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    from fastsched.plugins.schedulinggates import SchedulingGates

    class Gates(SchedulingGates):
        def pre_enqueue(self, pod):
            return super().pre_enqueue(pod)

    class Preemption(DefaultPreemption):
        def pre_enqueue(self, pod):
            return super().pre_enqueue(pod)

    assert SchedulingGates().pre_enqueue_pod_only and not Gates().pre_enqueue_pod_only
    assert _preemption().pre_enqueue_per_pod_group
    assert not _preemption(generic_workload=False).pre_enqueue_per_pod_group
    assert not _preemption(cls=Preemption).pre_enqueue_per_pod_group


def test_default_preemption_holds_a_gang_with_one_question_per_pass():
    pl = _preemption()
    calls = []
    ask = pl.pre_enqueue

    def counted(pod):
        calls.append(pod.name)
        return ask(pod)

    pl.pre_enqueue = counted
    q = gated_queue(pl)
    q.add_pod_group(pod_group())
    for i in range(4):
        q.add(member(f"m{i}"))
    entity = q.get_pod_group("ns1", PG)
    assert not entity.gated
    pl.evaluator.preempting.add("pg-uid")
    calls.clear()
    q._run_pre_enqueue_plugins_for_group(entity)
    assert len(calls) == 1
    assert entity.gated and [(m.gating_plugin, m.gating_message) for m in entity.members] == \
        [("DefaultPreemption", "waiting for the preemption for this pod group to be finished")] * 4
    pl.evaluator.preempting.clear()
    q._run_pre_enqueue_plugins_for_group(entity)
    assert not entity.gated and not any(m.gated for m in entity.members)


def test_a_rejection_is_asked_again():
    """The mark is a Success's only: a pod the plugin rejected is asked on every pass."""
    allow = PodOnlyAllow("allow")
    q = gated_queue(allow)
    q.add_pod_group(pod_group())
    q.add(member("m0", allow=False))
    entity = q.get_pod_group("ns1", PG)
    q._run_pre_enqueue_plugins_for_group(entity)
    assert allow.calls == 2 and entity.gated


@pytest.mark.parametrize("declared", [True, False])
def test_a_pod_without_a_group_is_not_asked_again_by_a_pod_only_plugin(declared):
    """The queue's inlined loop for a pod no plugin gates (every new pod) records what a pod-only
    plugin let through, and skips it the next time for the same pod object only; the plugins after
    it are asked each time; a rejection gates the pod with the plugin's message."""
    from fastsched.testing import make_pod

    allow = (PodOnlyAllow if declared else Undeclared)("allow")
    after = Undeclared("allow", name="after")
    q = gated_queue(allow, after)
    pod = make_pod("p0", namespace="ns1", labels={"allow": ""}).replace(uid="p0")
    pinfo = q.add(pod)
    assert not pinfo.gated and (allow.calls, after.calls) == (1, 1)
    assert (pinfo.pod_only_passed is pod) == declared
    q._run_pre_enqueue_plugins(pinfo)  # a later pass (a move), the same pod object
    assert not pinfo.gated and (allow.calls, after.calls) == (1 if declared else 2, 2)
    rejected = q.add(make_pod("p1", namespace="ns1").replace(uid="p1"))
    assert rejected.gated and rejected.gating_plugin == "podOnly" and after.calls == 2
    assert rejected.gating_message == "pod label not in allowlists" and rejected.pod_only_passed is None
    assert rejected.unschedulable_plugins == {"podOnly"}
