"""Pods sharing spec objects after pods of another spec with an equal plan (scheduler_perf's
measured pods after init or finalizer pods of another namespace): ``CompiledCycle._shortcut_once``
takes the last-values shortcut for the first of them only; the second takes the full path, which
memoizes the spec, and the rest find their plan by ``_plan_of``'s first rule. The decisions must be
the plugin-call path's, and the plan the shortcut's (the full path's for the same pods)."""
from __future__ import annotations

import collections

import pytest

from fastsched import Scheduler, load_config
from fastsched.runtime.compiled_cycle import CompiledCycle
from fastsched.testing import make_node, make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _pods(base, namespace: str, count: int, prefix: str) -> list:
    """``count`` pods of ``base``'s very spec objects (as pods stamped from one template)."""
    return [base.replace(name=f"{prefix}{i}", uid=f"{namespace}-{prefix}{i}") for i in range(count)]


def _run(compiled: bool, requests: dict, counts: collections.Counter | None = None):
    s = Scheduler(load_config(V1), seed=3)
    s.use_compiled_cycle = compiled
    s.add_nodes([make_node(f"n{i}", cpu=str(2 + i % 3), memory="16Gi", pods="20",
                           labels={"kubernetes.io/hostname": f"n{i}"}) for i in range(12)])
    first = make_pod("a", namespace="ns-1", requests=requests)
    second = make_pod("b", namespace="ns-2", requests=requests)  # equal but not the same objects
    third = make_pod("c", namespace="ns-3", requests=requests)
    s.add_pods(_pods(first, "ns-1", 30, "a"))
    s.add_pods(_pods(second, "ns-2", 60, "b"))
    s.add_pods(_pods(third, "ns-3", 30, "c"))
    results = [(r.pod.key, r.status, r.node_name, r.message) for r in s.run()]
    return s, results


@pytest.mark.parametrize("requests", [{"cpu": "100m", "memory": "64Mi"}, {"cpu": "300m"}, {}])
def test_pods_of_a_shared_spec_decide_as_the_plugin_call_path_and_take_the_shortcut_once(monkeypatch, requests):
    calls: collections.Counter = collections.Counter()
    real_shortcut, real_memo = CompiledCycle._plan_of_last_values, CompiledCycle._memo_guards
    real_plan_of = CompiledCycle._plan_of
    plans: dict = collections.defaultdict(set)

    def plan_of(self, pod, table, snapshot):
        plan = real_plan_of(self, pod, table, snapshot)
        plans[pod.namespace].add(id(plan))
        return plan

    def shortcut(self, pod, spec, ids, table):
        plan = real_shortcut(self, pod, spec, ids, table)
        calls["served", pod.namespace] += plan is not None
        return plan

    def memo(self, pod, spec, ids, table):
        calls["memo", pod.namespace] += 1
        return real_memo(self, pod, spec, ids, table)

    monkeypatch.setattr(CompiledCycle, "_plan_of_last_values", shortcut)
    monkeypatch.setattr(CompiledCycle, "_memo_guards", memo)
    monkeypatch.setattr(CompiledCycle, "_plan_of", plan_of)
    s, fast = _run(True, requests)
    monkeypatch.undo()
    _, slow = _run(False, requests)
    assert fast == slow
    assert sum(r[1] == "Scheduled" for r in fast) >= 100
    (fw,) = s.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 100
    # each later namespace's spec: the shortcut for its first pod, the full path (memo) for its
    # second, then the first rule (neither) for the other 58 / 28
    for ns in ("ns-2", "ns-3"):
        assert (calls["served", ns], calls["memo", ns]) == (1, 1), (ns, calls)
    # one plan for all: the shortcut's (the last shared key's) is the one the full path finds
    assert plans["ns-1"] == plans["ns-2"] == plans["ns-3"] and len(plans["ns-1"]) == 1
