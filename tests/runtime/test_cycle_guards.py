"""The compiled cycle's guards that NodeResourcesFit and BalancedAllocation give (``dra_guard``:
the DeviceClasses' version for pods requesting DRA extended resource names) answer, on their
native-names fast path, what the per-name test answers, on seeded random request names."""
import itertools
import random

import pytest

from fastsched import Scheduler
from fastsched.dra.extended_resources import is_dra_extended_resource_name
from fastsched.plugins.noderesources.dra_extended import _NATIVE_NAMES, dra_guard

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "hugepages-2Mi", "example.com/gpu", "example.com/other",
         "deviceclass.resource.kubernetes.io/gpu", "nvidia.com/gpu", "requests.cpu", "kubernetes.io/foo")


def _handle():
    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    return next(p for p in fw.filter_plugins if p.name() == "NodeResourcesFit").handle


def test_native_names_are_never_dra_extended_resource_names():
    assert _NATIVE_NAMES and not any(is_dra_extended_resource_name(n) for n in _NATIVE_NAMES)


def test_dra_guard_answers_as_the_per_name_test():
    handle = _handle()
    rng = random.Random(11)
    combos = [c for r in range(0, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(200)]
    for names in combos:
        requests = {name: 1 for name in names}
        expected_none = not any(is_dra_extended_resource_name(n) for n in names)
        assert (dra_guard(handle, requests) is None) == expected_none, names


def test_dynamicresources_guard_answers_as_the_per_name_test():
    """DynamicResources' guard: None for requests without a DRA extended resource name (its
    cpu-and-memory fast path included), the DeviceClasses' version otherwise."""
    from fastsched.testing import make_pod

    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    dra = next(p for p in fw.pre_filter_plugins if p.name() == "DynamicResources")
    rng = random.Random(12)
    combos = [c for r in range(1, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(100)]
    for names in combos:
        pod = make_pod("p", requests={name: "1" for name in names})
        expected_none = not any(is_dra_extended_resource_name(n) for n in pod.requests)
        assert (dra.column_guard(pod, s.snapshot.table) is None) == expected_none, names


def test_dynamicresources_mapped_extended_resources_answers_as_the_per_name_test():
    """What DynamicResources' PreFilter reads each cycle for pods without claims: the requests of
    DRA extended resource names when one maps to a DeviceClass (None for cpu-and-memory pods at
    once), on seeded random request names."""
    from fastsched.testing import make_pod

    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    dra = next(p for p in fw.pre_filter_plugins if p.name() == "DynamicResources")
    resolver = dra.manager.device_class_resolver()
    rng = random.Random(13)
    combos = [c for r in range(1, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(100)]
    mapped = 0
    for names in combos:
        pod = make_pod("p", requests={name: "1" for name in names})
        dra_names = [n for n in pod.requests if is_dra_extended_resource_name(n)]
        maps = any(pod.requests[n] and resolver.get_device_class(n) is not None for n in dra_names)
        expected = {n: int(pod.requests[n]) for n in dra_names} if maps else None
        assert dra.mapped_extended_resources(pod) == expected, names
        mapped += maps
    assert mapped > 20


# -- the guard memo (CompiledCycle._guard_memo) and its contract (column_guard_fixed) --------------

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
_SPREAD_LIST = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}]}]}


def _guarded(s):
    (fw,) = s.profiles.values()
    return [p for p in fw.compiled_cycle.plugins.values() if callable(getattr(p, "column_guard", None))]


def _cluster_states(s):
    """Changes of what the stock guards read beside the pod (DeviceClasses, a Service selecting
    the pods, pods with required anti-affinity and preferred affinity terms): yields after each."""
    from fastsched.testing import make_node
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi", labels={"zone": f"z{i % 2}"}) for i in range(4)])
    yield
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    yield
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "other"},
           "spec": {"extendedResourceName": "example.com/other"}})
    yield
    s.add({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
           "spec": {"selector": {"app": "a"}}})
    yield
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
    s.add_pods([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "anti", "namespace": "default",
                                                                "labels": {"app": "b"}},
                 "spec": {"nodeName": "n0", "containers": [{"name": "c", "image": "i"}], "affinity": {
                     "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                     "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 5, "podAffinityTerm": term}]}}}}])
    yield


@pytest.mark.parametrize("config", [V1, {**V1, **_SPREAD_LIST}], ids=["default", "spread-list"])
def test_fixed_guards_keep_their_value_whatever_the_cluster(config):
    """The promise of ``column_guard_fixed`` (framework.columns.GuardedColumnPlugin): a guard
    fixed for a pod returns the same value in every cluster state below (the pods keep their
    spec objects); guards not fixed for some pod do change over these states (so the test sees
    a wrong True), and the answer follows the request names (DRA extended names: not fixed)."""
    from fastsched import load_config
    from fastsched.testing import make_pod

    s = Scheduler(load_config(config), seed=0)
    rng = random.Random(21)
    combos = [c for r in range(0, 3) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, 4))) for _ in range(40)]
    pods = [make_pod(f"p{i}", labels={"app": "a"}, requests={name: "1" for name in names})
            for i, names in enumerate(combos)]
    seen: dict = {}
    for _ in _cluster_states(s):
        table = s.snapshot.table
        for p in _guarded(s):
            for pod in pods:
                seen.setdefault((p.name(), pod.name), []).append(p.column_guard(pod, table))
    fixed_any = changed_any = 0
    for p in _guarded(s):
        fixed_of = getattr(p, "column_guard_fixed", None)
        for pod in pods:
            values = seen[(p.name(), pod.name)]
            fixed = fixed_of is not None and fixed_of(pod)
            if fixed:
                fixed_any += 1
                assert all(v == values[0] for v in values), (p.name(), pod.name, values)
            elif any(v != values[0] for v in values):
                changed_any += 1
            if p.name() in ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "DynamicResources"):
                assert fixed == (not any(is_dra_extended_resource_name(n) for n in pod.requests)), (p.name(), pod)
            if p.name() == "PodTopologySpread":
                assert fixed == (config is not V1)
            if p.name() == "InterPodAffinity":
                assert not fixed
    assert fixed_any > 100 and changed_any > 20


def test_the_guard_memo_asks_a_fixed_guard_once_per_spec():
    """The compiled cycle asks a guard fixed for a spec once (``_guard_memo``), the others every
    cycle, and its keys are those of asking every guard every cycle: pods of one template (one
    spec's objects, interned at admission) with native requests, scheduled one by one."""
    from fastsched.testing import make_node

    s = Scheduler(seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(6)])
    (fw,) = s.profiles.values()
    cc = fw.compiled_cycle
    calls = {}
    for i, g in enumerate(cc._guards):
        def counted(pod, table, _g=g, _i=i):
            calls[_i] = calls.get(_i, 0) + 1
            return _g(pod, table)
        cc._guards[i] = counted
    keys = []
    schedule = cc.schedule

    def recording(state, pod, snapshot, *a, **k):
        keys.append((pod, snapshot.table.node_version))
        return schedule(state, pod, snapshot, *a, **k)
    cc.schedule = recording
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}
    n = 12
    s.add_pods([{**manifest, "metadata": {**manifest["metadata"], "name": f"p{i}"}} for i in range(n)])
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    assert cc.fused_cycles == n and len(cc._guard_memo) == 1
    names = [p.name() for p in _guarded(s)]
    for i, name in enumerate(names):
        expected = 1 if name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "DynamicResources") else n
        assert calls.get(i, 0) == expected, (name, calls)
    # the memo's values are the guards' answers now
    (spec, values, asked, sourced), = cc._guard_memo.values()
    assert sourced == ()  # (native requests: the DeviceClasses guards are fixed, no source read)
    pod = keys[-1][0]
    table = s.snapshot.table
    assert values == tuple(g(pod, table) for g in cc._guards)
    assert asked == tuple(i for i, name in enumerate(names) if name in ("InterPodAffinity", "PodTopologySpread"))


def test_a_guard_that_changes_between_pods_of_one_spec_changes_the_plan():
    """The plan key's fast path (the last cycle's spec objects again: ``CompiledCycle.schedule``)
    still asks the guards that are not fixed: a pod with required anti-affinity against the
    template's pods, bound between two runs, turns InterPodAffinity's guard, and the next pods of
    the same spec objects avoid its zone (a stale plan would not judge existing pods' terms)."""
    from fastsched.testing import make_node

    s = Scheduler(seed=0)
    # n5, alone in z1, is by far the emptiest: every pod goes there unless something forbids it
    s.add_nodes([make_node(f"n{i}", cpu="2", memory="4Gi", labels={"zone": "z0"}) for i in range(5)]
                + [make_node("n5", cpu="64", memory="128Gi", labels={"zone": "z1"})])
    (fw,) = s.profiles.values()
    cc = fw.compiled_cycle
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}

    def pods(names):
        return [{**manifest, "metadata": {**manifest["metadata"], "name": n}} for n in names]
    s.add_pods(pods(["p0", "p1", "p2"]))
    assert [r.node_name for r in s.run()] == ["n5"] * 3
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
    s.add_pods([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "anti", "namespace": "default"},
                 "spec": {"nodeName": "n5", "containers": [{"name": "c", "image": "i"}], "affinity": {
                     "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}])
    fused = cc.fused_cycles
    s.add_pods(pods([f"q{i}" for i in range(8)]))
    results = [r for r in s.run() if r.pod.name.startswith("q")]
    assert len(results) == 8 and all(r.status == "Scheduled" for r in results)
    assert {r.node_name for r in results} <= {f"n{i}" for i in range(5)}  # never z1, the anti pod's zone
    assert cc.fused_cycles > fused  # ... on the compiled cycle


def test_a_node_added_between_pods_of_one_spec_changes_the_plan():
    """The plan key's fast path compares the node-set version: a tainted node added between two
    runs of one template's pods (the emptiest by far, so a plan compiled before it would pick it)
    is filtered out for the next pods, and an untainted one is used."""
    from fastsched.testing import make_node

    s = Scheduler(seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="2", memory="4Gi") for i in range(3)])
    (fw,) = s.profiles.values()
    cc = fw.compiled_cycle
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}

    def pods(names):
        return [{**manifest, "metadata": {**manifest["metadata"], "name": n}} for n in names]
    s.add_pods(pods(["p0", "p1", "p2"]))
    assert all(r.status == "Scheduled" for r in s.run())
    s.add_nodes([make_node("tainted", cpu="64", memory="128Gi", taints=[{"key": "x", "effect": "NoSchedule"}])])
    s.add_pods(pods(["q0", "q1", "q2"]))
    assert {r.node_name for r in s.run() if r.pod.name.startswith("q")} <= {"n0", "n1", "n2"}
    s.add_nodes([make_node("big", cpu="64", memory="128Gi")])
    s.add_pods(pods(["r0", "r1"]))
    assert [r.node_name for r in s.run() if r.pod.name.startswith("r")] == ["big", "big"]
    assert cc.fused_cycles == 8


def test_pods_of_two_specs_in_turn_get_their_own_plans():
    """The plan key's fast path is taken only for the last cycle's very spec objects: pods of two
    templates (a node selector each) popped in turn each land on their own node."""
    from fastsched.testing import make_node

    s = Scheduler(seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi", labels={"pin": f"n{i}"}) for i in range(3)])
    (fw,) = s.profiles.values()

    def pod(name, pin):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": name},
                "spec": {"nodeSelector": {"pin": pin}, "containers": [{"name": "c", "image": "i"}]}}
    s.add_pods([pod(f"p{i}", "n0" if i % 2 else "n2") for i in range(8)])
    results = s.run()
    assert [r.node_name for r in results] == ["n0" if i % 2 else "n2" for i in range(8)]
    assert fw.compiled_cycle.fused_cycles == 8


# -- guard sources (column_guard_source): the DeviceClasses' version read once a cycle -------------

_DRA_GUARDED = ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "DynamicResources")


@pytest.mark.parametrize("config", [V1, {**V1, **_SPREAD_LIST}], ids=["default", "spread-list"])
def test_guard_sources_answer_their_guards_whatever_the_cluster(config):
    """The promise of ``column_guard_source`` (framework.columns.GuardedColumnPlugin): a source
    taken for a pod in the first cluster state answers that plugin's guard for the pod in every
    later state (DeviceClasses added: the value moves), equal sources answer equal values, and a
    source is given exactly when the guard is not fixed and reads the DeviceClasses (the three
    DRA-reading plugins; the stock framework's three sources are one)."""
    from fastsched import load_config
    from fastsched.testing import make_pod

    s = Scheduler(load_config(config), seed=0)
    rng = random.Random(31)
    combos = [c for r in range(0, 3) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, 4))) for _ in range(40)]
    pods = [make_pod(f"p{i}", labels={"app": "a"}, requests={name: "1" for name in names})
            for i, names in enumerate(combos)]
    sources: dict = {}
    for p in _guarded(s):
        source_of = getattr(p, "column_guard_source", None)
        for pod in pods:
            src = source_of(pod) if source_of is not None else None
            dra = any(is_dra_extended_resource_name(n) for n in pod.requests)
            assert (src is not None) == (p.name() in _DRA_GUARDED and dra), (p.name(), pod.requests)
            if src is not None:
                sources[(p.name(), pod.name)] = src
    moved = 0
    for _ in _cluster_states(s):
        table = s.snapshot.table
        for p in _guarded(s):
            for pod in pods:
                src = sources.get((p.name(), pod.name))
                if src is not None:
                    assert src() == p.column_guard(pod, table), (p.name(), pod.requests)
        shared = {}
        for (name, pod_name), src in sources.items():
            shared.setdefault(src, set()).add(src())
        assert all(len(values) == 1 for values in shared.values())
        moved += 1
    assert moved >= 4 and len(set(sources.values())) == 1 and len(sources) > 60


def _dra_cluster(s, nodes=3, devices=2):
    from fastsched.testing import make_node

    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(nodes)])
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu",
                    "selectors": [{"cel": {"expression": 'device.driver == "d.example.com"'}}]}})
    for i in range(nodes):
        s.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"n{i}-slice"},
               "spec": {"driver": "d.example.com", "nodeName": f"n{i}",
                        "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": f"dev-{j}"} for j in range(devices)]}})


def _gpu_pods(names):
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": n},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                 "requests": {"cpu": "100m", "example.com/gpu": "1"},
                 "limits": {"example.com/gpu": "1"}}}]}} for n in names]


def test_the_device_classes_source_is_read_once_a_cycle_and_keys_the_plan(monkeypatch):
    """A DRA extended-resource pod's three DeviceClasses guards are asked once per spec (the
    memo) and their shared source once a cycle; its keys are those of asking every guard every
    cycle; and the DeviceClass deleted between pods of one spec changes the plan: the next pod
    finds no node (no node's allocatable has example.com/gpu), where a plan kept from before
    would let DynamicResources serve it."""
    s = Scheduler(seed=0)
    _dra_cluster(s)
    (fw,) = s.profiles.values()
    cc = fw.compiled_cycle
    names = [p.name() for p in _guarded(s)]
    calls: dict = {}
    real_guards = list(cc._guards)
    for i, g in enumerate(cc._guards):
        def counted(pod, table, _g=g, _i=i):
            calls[_i] = calls.get(_i, 0) + 1
            return _g(pod, table)
        cc._guards[i] = counted
    source_calls = []
    real_call = dra_extended.DeviceClassesGuard.__call__

    def counted_call(self):
        source_calls.append(1)
        return real_call(self)
    monkeypatch.setattr(dra_extended.DeviceClassesGuard, "__call__", counted_call)
    # the key each lookup used (the last key's, when _plan_of returned the last lookup's plan)
    # beside every guard's value at that moment
    used: list = []
    checks: list = []
    look_up, plan_of = cc._look_up, cc._plan_of

    def recording_look_up(pod, spec, key, table, snapshot, guard_entry=None):
        used.append(key)
        return look_up(pod, spec, key, table, snapshot, guard_entry)

    def recording_plan_of(pod, table, snapshot):
        before, n_used = cc._last_lookup, len(used)
        plan = plan_of(pod, table, snapshot)
        if len(used) == n_used:
            used.append(before[0] if before is not None and plan is before[1] else None)
        checks.append((pod.name, used[-1], tuple(g(pod, table) for g in real_guards)))
        return plan
    cc._look_up, cc._plan_of = recording_look_up, recording_plan_of
    n = 4
    s.add_pods(_gpu_pods([f"p{i}" for i in range(n)]))
    results = s.run()
    assert [r.status for r in results] == ["Scheduled"] * n
    cycles = cc.fused_cycles
    assert cycles == n and len(cc._guard_memo) == 1
    (spec, values, asked, sourced), = cc._guard_memo.values()
    dra_at = tuple(i for i, name in enumerate(names) if name in _DRA_GUARDED)
    assert len(sourced) == 1 and tuple(sorted(sourced[0][1])) == dra_at and not set(asked) & set(dra_at)
    for i in dra_at:  # the memo's call and the check of its source when met again, not one a cycle
        assert calls.get(i, 0) == 2, (names[i], calls)
    assert len(source_calls) >= n - 1  # (the first pod's memo entry reads it once more, to check it)
    key, _, spec_held, _ = cc._last_lookup  # the last pod's key: every guard's value now
    pod = results[-1].pod
    assert key[_GUARDS_AT:] == tuple(g(pod, s.snapshot.table) for g in real_guards)
    s.delete_object("DeviceClass", "gpu")
    s.add_pods(_gpu_pods(["q0"]))
    (late,) = [r for r in s.run() if r.pod.name == "q0"]
    assert late.status != "Scheduled" and not late.node_name
    # every key a cycle used holds the guards' values of that moment (the deleted class moved the
    # version: q0's cycle must not take the last key's plan)
    assert any(name == "q0" and key is not None for name, key, _ in checks)
    for name, key, real in checks:
        assert key is None or key[_GUARDS_AT:] == real, (name, key, real)


from fastsched.plugins.noderesources import dra_extended  # noqa: E402
from fastsched.runtime.compiled_cycle import _GUARDS_AT  # noqa: E402
