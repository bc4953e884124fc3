"""Plans derived for pods that differ only in which extended resources they request
(``CompiledCycle._renamed_key`` / ``_derive``; scheduler_perf SchedulingWithExtendedResource: every
pod asks for its own ``foo.com/bar-<i>``). Whole runs against the plugin-call path (record="all"),
with the default scoring and with a scoring strategy naming some of the extended resources (those
must not be renamed: their scores depend on which one a pod asks for)."""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock
from fastsched.runtime.compiled_cycle import SPEC_FIELDS, CompiledCycle
from fastsched.testing import make_node, make_pod

SOME = [f"some.io/r-{i}" for i in range(4)]  # on about half of the nodes each

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
#: MostAllocated over cpu and two of the extended resources: the pods asking for some.io/r-0 are
#: scored by it, those asking for r-2 are not
SCORED = {**V1, "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
    "name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "cpu", "weight": 1}, {"name": "some.io/r-0", "weight": 5}, {"name": "some.io/r-1", "weight": 3}]}}}]}]}


def _nodes(rng: random.Random, n: int) -> list:
    out = []
    for i in range(n):
        extra = {f"foo.com/bar-{i}": str(rng.randint(1, 2))}
        for r in SOME:
            if rng.random() < 0.5:
                extra[r] = str(rng.randint(1, 6))
        out.append(make_node(f"n{i}", cpu=f"{rng.choice((2, 4, 8))}", memory="8Gi", pods="110", extra=extra))
    return out


def _pods(rng: random.Random, n_nodes: int, count: int) -> list:
    out = []
    for k in range(count):
        req = {"cpu": f"{rng.choice((100, 500))}m"}
        if rng.random() < 0.5:
            req[f"foo.com/bar-{rng.randrange(n_nodes + 2)}"] = str(rng.randint(1, 2))  # (+2: on no node)
        else:
            req[rng.choice(SOME)] = str(rng.randint(1, 2))
        out.append(make_pod(f"p{k}", namespace="default", requests=req))
    return out


def _run(config, nodes, pods, record):
    s = Scheduler(load_config(config), seed=3, record=record, clock=VirtualClock(start=1e9))
    # the recorded side is the plugin-call path (the compiled diagnosis would compile plans there)
    s.use_compiled_diagnosis = record is None
    s.add(list(nodes))
    s.add(list(pods))
    results = s.run(until=1e9 + 600)
    return [(r.pod.key, r.status, r.node_name, r.message) for r in results]


@pytest.mark.parametrize("config", [None, SCORED], ids=["default", "scored"])
@pytest.mark.parametrize("seed", range(2))
def test_derived_plans_place_as_the_plugin_path(config, seed, monkeypatch):
    rng = random.Random(4100 + seed)
    nodes = _nodes(rng, 30)
    pods = _pods(rng, 30, 90)
    derived = []
    real = CompiledCycle._derive

    def counting(self, template, pod, spec, snapshot):
        plan = real(self, template, pod, spec, snapshot)
        derived.append(plan is not None)
        return plan

    monkeypatch.setattr(CompiledCycle, "_derive", counting)
    recorded = _run(config, nodes, pods, "all")
    assert not derived  # (the plugin-call path compiles nothing)
    fast = _run(config, nodes, pods, None)
    assert sum(derived) > 20
    assert fast == recorded
    assert any(r[1] != "Scheduled" for r in fast) and sum(r[1] == "Scheduled" for r in fast) > 30


def test_renamed_keys():
    """Pods differing only in which extended resource they ask for share a renamed key; amounts,
    native resources and the scoring strategy's resources are not renamed."""
    s = Scheduler(load_config(SCORED), seed=1, clock=VirtualClock(start=1e9))
    s.add([make_node("n0", cpu="4", memory="8Gi", pods="110", extra={"foo.com/bar-0": "1"}),
           make_pod("first", namespace="default", requests={"cpu": "100m"})])
    s.run(until=1e9 + 1)
    cc = s.profiles["default-scheduler"].compiled_cycle
    table = cc._table
    assert table is not None  # (the first pod's cycle bound it)

    def key(requests):
        pod = make_pod("p", namespace="default", requests=requests)
        spec = tuple(getattr(pod, f) for f in SPEC_FIELDS)
        base = (*map(id, spec), table.node_version, *[g(pod, table) for g in cc._guards])
        return cc._renamed_key(pod, spec, cc._shared_key(pod, spec, table, base))

    a = key({"cpu": "100m", "foo.com/bar-1": "1"})
    assert a is not None
    assert key({"cpu": "100m", "foo.com/bar-7": "1"}) == a
    assert key({"cpu": "100m", "foo.com/bar-7": "2"}) != a
    assert key({"cpu": "200m", "foo.com/bar-7": "1"}) != a
    # scored by the strategy: kept by name
    assert key({"cpu": "100m", "some.io/r-0": "1"}) is None
    scored = key({"cpu": "100m", "some.io/r-0": "1", "foo.com/bar-3": "1"})
    assert scored is not None and scored != a
    assert key({"cpu": "100m", "some.io/r-1": "1", "foo.com/bar-3": "1"}) != scored
    assert key({"cpu": "100m", "some.io/r-0": "1", "foo.com/bar-9": "1"}) == scored
    assert key({"cpu": "100m", "some.io/r-2": "1"}) == a
    assert key({"cpu": "100m"}) is None  # nothing to rename
