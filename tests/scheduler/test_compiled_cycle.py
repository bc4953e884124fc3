"""The fused compiled cycle (issue 13) decides exactly as the plugin-call path: same node, status and
message for every pod, same round-robin index, same RNG state, on seeded random clusters and
configurations; it declines (and the plugin-call path runs) where it cannot express a plugin."""
import random

import pytest

from fastsched import load_config
from fastsched._kernels import _cycle
from fastsched.api import Pod
from fastsched.runtime.compiled_cycle import PLAN_CACHE_SIZE
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _fit_args(strategy):
    return {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}


CONFIGS = {
    "default": {},
    "score-all-nodes": {"percentageOfNodesToScore": 100},
    "few-nodes": {"percentageOfNodesToScore": 1},
    "most-allocated": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [_fit_args(
        {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1},
                                                {"name": "nvidia.com/gpu", "weight": 2}]})]}]},
    "requested-to-capacity": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [_fit_args(
        {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}],
         "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 60, "score": 3},
                                                {"utilization": 100, "score": 0}]}})]}]},
    "balanced-extended-ignored": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}},
        {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/foo"]}}]}]},
    "weights": {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "TaintToleration", "weight": 7}, {"name": "NodeAffinity", "weight": 5},
        {"name": "ImageLocality", "weight": 4}, {"name": "NodeResourcesFit", "weight": 2}]}}}]},
}


def _run(config, seed, compiled, *, nodes=250, running=500, incoming=150, between=None):
    node_list, pods = random_cluster(seed, nodes, running)
    rng = random.Random(seed * 31 + 7)
    s = Scheduler(load_config({**V1, **config}), seed=seed)
    s.use_compiled_cycle = compiled
    s.add_nodes(node_list)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(pods)
    s.add_pods([random_pod(rng, i) for i in range(incoming)])
    results = s.run()
    if between is not None:
        between(s, rng)
        s.add_pods([random_pod(rng, incoming + i) for i in range(incoming)])
        results = s.run()
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results]
    return s, outcome, s.next_start_node_index, s.rng.bit_generator.state


def _engine(s):
    (fw,) = s.profiles.values()
    return fw.compiled_cycle


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fused_cycle_decides_as_the_plugin_calls(config, seed):
    fused, *got = _run(CONFIGS[config], seed, True)
    plain, *want = _run(CONFIGS[config], seed, False)
    assert got[0] == want[0]
    assert got[1:] == want[1:]
    engine = _engine(fused)
    assert engine.fused_cycles >= 50, (engine.fused_cycles, engine.declined_cycles)
    assert _engine(plain).fused_cycles == 0


def _change_nodes(s, rng):
    """Taint, relabel, cordon and add nodes, so every plan's node-side columns go stale."""
    for i in range(10):
        s.add_nodes([make_node(f"late-{i}", cpu="8", memory="16Gi", labels={"disktype": "ssd", "tier": "3"},
                               taints=[{"key": "dedicated", "value": "x", "effect": "PreferNoSchedule"}] if i % 2 else [])])


def _add_anti_affinity_pod(s, rng):
    """A running pod with required anti-affinity: InterPodAffinity's PreFilter stops skipping."""
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}
    node = sorted(s.snapshot.table.row_of)[0]
    s.add_pods([make_pod("guard", node_name=node, labels={"app": "guard"},
                         affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})])


@pytest.mark.parametrize("between", [_change_nodes, _add_anti_affinity_pod], ids=["nodes-change", "anti-affinity"])
def test_plans_follow_cluster_changes(between):
    fused, *got = _run({}, 5, True, between=between)
    _, *want = _run({}, 5, False, between=between)
    assert got == want
    if between is _add_anti_affinity_pod:
        assert _engine(fused).declined_cycles > 0


def test_plan_cache_eviction_keeps_results():
    """More distinct pod specs than the cache holds."""
    def spec_heavy(seed, compiled):
        s = Scheduler(load_config(V1), seed=seed)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node(f"n{i}", cpu=str(4 + i % 5), memory="32Gi") for i in range(120)])
        s.add_pods([make_pod(f"p{i}", requests={"cpu": f"{100 + 10 * (i % (PLAN_CACHE_SIZE + 20))}m"})
                    for i in range(3 * PLAN_CACHE_SIZE)])
        return [(r.pod.name, r.node_name) for r in s.run()], s.rng.bit_generator.state

    assert spec_heavy(3, True) == spec_heavy(3, False)


def test_declines_are_explained():
    from fastsched.framework.columns import FILTER_SKIPPED
    from fastsched.runtime import Registry

    class Choosy:
        """Offers a column form only for pods without the label "choosy"."""

        def name(self):
            return "Choosy"

        def column_form(self, pod, table):
            return None if "choosy" in pod.labels else FILTER_SKIPPED

        def filter(self, state, pod, node_info):
            return None

        def filter_vectorized(self, state, pod, nodes):
            return None  # every node passes

    registry = Registry({"Choosy": lambda args, handle: Choosy()})
    cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler",
                                            "plugins": {"filter": {"enabled": [{"name": "Choosy"}]}}}]},
                      registry_names=["Choosy"])
    s = Scheduler(cfg, registry=registry, seed=0)
    s.add_nodes([make_node(f"n{i}") for i in range(5)])
    s.add_pods([make_pod("picked", labels={"choosy": "yes"}), make_pod("plain")])
    s.run()
    engine = _engine(s)
    assert engine.fused_cycles == 1 and engine.declined_cycles == 1
    reasons = {getattr(p, "reason", None) for p in engine._plans.values()}
    assert "Choosy has no column form for this pod" in reasons


def test_a_plugin_without_column_form_keeps_the_plugin_call_path():
    from fastsched.framework import Status
    from fastsched.runtime import Registry

    class Picky:
        def name(self):
            return "Picky"

        def filter(self, state, pod, node_info):
            return None if node_info.node().name != "n1" else Status(2, "no")

    registry = Registry({"Picky": lambda args, handle: Picky()})
    cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler",
                                            "plugins": {"filter": {"enabled": [{"name": "Picky"}]}}}]},
                      registry_names=["Picky"])
    s = Scheduler(cfg, registry=registry, seed=0)
    s.add_nodes([make_node("n1"), make_node("n2")])
    s.add_pods([make_pod("p")])
    (r,) = s.run()
    assert r.node_name == "n2"
    engine = _engine(s)
    assert not engine.enabled and engine.declined_reason == "plugins without a column form: Picky"


def test_openmp_scoring_of_large_windows_decides_as_one_thread():
    """Windows of PARALLEL_MIN_NODES+ feasible nodes may be scored on several threads: same result."""
    from fastsched._kernels._cycle import PARALLEL_MIN_NODES
    from fastsched.sim.workloads import WORKLOADS

    def run(threads):
        inst = WORKLOADS["SchedulingBasic"].build(nodes=PARALLEL_MIN_NODES + 500, init_pods=200,
                                                  measured_pods=8, prebind="random", seed=4)
        s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 100}), seed=4)
        s.add(inst.namespaces)
        s.add_nodes(inst.nodes)
        s.add_pods(inst.init_pods)
        s.add_pods(inst.measured_pods)
        _engine(s).threads = threads
        placed = [r.node_name for r in s.run()]
        assert _engine(s).fused_cycles == len(placed)
        return placed, s.rng.bit_generator.state

    assert run(2) == run(1)


def _replicas(rng, count, start=0, specs=4):
    """Pods of ``specs`` templates (the same field objects, as a controller's pods share them), so
    their plans are used again and get score caches."""
    templates = [random_pod(rng, 10_000 + i) for i in range(specs)]
    return [templates[i % specs].replace(name=f"r{start + i}", uid=f"uid-r{start + i}") for i in range(count)]


@pytest.mark.parametrize("config", ["default", "most-allocated", "requested-to-capacity", "balanced-extended-ignored"])
@pytest.mark.parametrize("seed", [1, 2])
def test_score_cache_decides_as_computing_every_score(config, seed):
    """Rows' cached resource scores are reused only while the row is unchanged: binds, deletions
    and node changes between the pods' cycles give the same decisions as without the cache and as
    the plugin calls."""
    def run(compiled, budget):
        node_list, pods = random_cluster(seed, 200, 300)
        rng = random.Random(seed)
        s = Scheduler(load_config({**V1, **CONFIGS[config]}), seed=seed)
        s.use_compiled_cycle = compiled
        if compiled:
            _engine(s).score_cache_budget = budget
        s.add_nodes(node_list)
        s.add_pods(pods)
        s.add_pods(_replicas(rng, 120))
        out = [(r.pod.name, r.node_name, r.message) for r in s.run()]
        for pod in [p for p in pods if p.node_name][:40:3]:  # rows change under the caches
            s.delete_pod(pod)
        s.add_pods(_replicas(rng, 80, start=120))
        out += [(r.pod.name, r.node_name, r.message) for r in s.run()]
        _change_nodes(s, rng)
        s.add_pods(_replicas(rng, 60, start=200))
        out += [(r.pod.name, r.node_name, r.message) for r in s.run()]
        return out, s.next_start_node_index, s.rng.bit_generator.state, s

    *cached, s_cached = run(True, 1 << 30)
    *uncached, s_uncached = run(True, 0)
    *plain, _ = run(False, 0)
    assert cached == uncached == plain
    engine = _engine(s_cached)
    assert engine.fused_cycles >= 60, engine.fused_cycles  # random specs with ports or affinity decline
    assert engine._score_cached and all(p.fused.score_cache_nbytes > 0 for p in engine._score_cached.values())
    assert not _engine(s_uncached)._score_cached


def test_score_cache_budget_drops_the_least_recently_used():
    s = Scheduler(load_config(V1), seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="64", memory="256Gi") for i in range(100)])
    engine = _engine(s)
    per_plan = _cycle.cache_nbytes(s.snapshot.table.capacity)  # a row's total and block, and the blocks' summaries
    engine.score_cache_budget = 2 * per_plan
    for round_ in range(3):  # four new specs a round (new values too: equal values share plans), each used twice
        templates = [make_pod(f"t{round_}-{i}", requests={"cpu": f"{100 + 10 * i + round_}m", "memory": "1Gi"})
                     for i in range(4)]
        s.add_pods([templates[i % 4].replace(name=f"p{round_}-{i}", uid=f"u{round_}-{i}") for i in range(8)])
        s.run()
    assert engine.declined_cycles == 0
    held = [p.fused.score_cache_nbytes for p in engine._score_cached.values()]
    assert held == [per_plan, per_plan]
    assert len({id(p) for p in engine._plans.values() if p.score_cached}) == 12  # (a plan may have two keys)


def test_pods_a_controller_created_share_a_plan_by_value():
    """A ReplicaSet's pods are each parsed from their own manifest: admission makes their equal
    spec values the same objects (Scheduler._interned), and they share one plan instead of
    compiling one per pod."""
    s = Scheduler(load_config(V1), seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="32Gi") for i in range(50)])
    s.add({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 20, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx",
                                                          "resources": {"requests": {"cpu": "250m"}}}]}}}})
    pods = s.list_objects("Pod")
    assert len(pods) == 20 and all(p.containers is pods[0].containers and p.labels is pods[0].labels for p in pods)
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    engine = _engine(s)
    assert engine.fused_cycles == 20
    assert len({id(p) for p in engine._plans.values()}) == 1


def test_column_reads_must_name_spec_fields():
    from fastsched.runtime.compiled_cycle import CompiledCycle

    s = Scheduler(load_config(V1), seed=0)
    (fw,) = s.profiles.values()
    plugin = next(p for p in fw.filter_plugins if p.name() == "NodeName")
    plugin.column_reads = ("node_name", "priority")  # not a spec field the plans are keyed by
    with pytest.raises(ValueError, match="priority"):
        CompiledCycle(fw)


def test_shared_plans_tell_exact_requests_apart():
    """Containers compare by their rounded amounts, not their exact nano-unit requests: two pods
    whose containers compare equal can request different totals (2 x 0.1Gi = 214748365 bytes
    against 2 x 107374183 = 214748366). The second must not reuse the first one's plan."""
    def pod(name, memory):
        return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                                  "spec": {"containers": [
                                      {"name": c, "image": "img", "resources": {"requests": {"memory": memory}}}
                                      for c in ("a", "b")]}})

    outcomes = []
    for compiled in (True, False):
        s = Scheduler(load_config(V1), seed=1)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node(f"n{i}", cpu="4", memory="214748365") for i in (1, 2)])
        a, b = pod("a", "0.1Gi"), pod("b", "107374183")
        assert a.containers == b.containers and a.requests != b.requests
        s.add_pods([a])
        first = s.run()
        s.add_pods([b])
        second = s.run()
        outcomes.append([(r.pod.name, r.node_name, r.status, r.message) for r in (*first, *second)])
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][-1][2] == "Unschedulable" and "Insufficient memory" in outcomes[0][-1][3]


def test_a_cycle_prescore_runs_when_its_score_is_disabled():
    """A plugin enabled at PreScore but not at Score still has its PreScore called each cycle (an
    error there fails the cycle on both paths, as upstream's RunPreScorePlugins)."""
    from fastsched.framework import Code, Status
    from fastsched.framework.columns import ColumnForm, CYCLE
    from fastsched.runtime import Registry

    calls = []

    class Watcher:
        def name(self):
            return "Watcher"

        def column_form(self, pod, table):
            return ColumnForm(score=CYCLE)

        def pre_score(self, state, pod, nodes):
            calls.append(pod.name)
            return Status(Code.ERROR, "watcher broke") if pod.name == "bad" else None

        def score(self, state, pod, node_info):
            return 0, None

    outcomes = []
    for compiled in (True, False):
        calls.clear()
        registry = Registry({"Watcher": lambda args, handle: Watcher()})
        cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler",
                                                "plugins": {"preScore": {"enabled": [{"name": "Watcher"}]}}}]},
                          registry_names=["Watcher"])
        s = Scheduler(cfg, registry=registry, seed=0)
        s.add_nodes([make_node(f"n{i}") for i in range(5)])
        s.add_pods([make_pod("good"), make_pod("bad")])
        outcomes.append(([(r.pod.name, r.node_name, r.status, r.message) for r in s.run()], list(calls)))
        if compiled:
            assert _engine(s).fused_cycles == 1
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1][:2] == ["good", "bad"] and "watcher broke" in outcomes[0][0][1][3]


@pytest.mark.parametrize("interned", [True, False], ids=["interned", "map-cleared"])
def test_pods_of_an_equal_template_find_the_shared_plan_once(monkeypatch, interned):
    """Pods stamped from a second template equal by value to the first (new objects, equal values)
    are made to share the first one's objects at admission (Scheduler._interned), and find its plan
    by those objects. When they could not be (the admission map was cleared, as when it is full),
    the first of them finds the plan by value, once; the following pods of that template find it by
    their objects, without recomputing the value key."""
    from fastsched.runtime.compiled_cycle import CompiledCycle

    calls = []
    original = CompiledCycle._shared_key

    def counting(self, *args):
        calls.append(args[0].name)
        return original(self, *args)

    monkeypatch.setattr(CompiledCycle, "_shared_key", counting)
    s = Scheduler(load_config(V1), seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="64", memory="256Gi") for i in range(40)])
    # an image no other test uses: the loader stamps a pod from a template it validated before
    # (fastsched.api.templates), and a test that ran earlier may have left one of equal spec
    spec = {"requests": {"cpu": "100m", "memory": "64Mi"}, "images": ("equal-template-test:1",)}
    first = make_pod("first", **spec)
    second = make_pod("second", **spec)
    assert second.containers == first.containers and second.containers is not first.containers
    s.add_pods([first.replace(name=f"a{i}", uid=f"a{i}") for i in range(5)])
    if not interned:
        s._spec_objects.clear()
    s.add_pods([second.replace(name=f"b{i}", uid=f"b{i}") for i in range(5)])
    assert all(r.status == "Scheduled" for r in s.run())
    engine = _engine(s)
    assert engine.fused_cycles == 10
    # a0 compiles (and records the value key); b0 shares a0's objects, or finds the plan by value
    assert calls == (["a0"] if interned else ["a0", "b0"])
    assert len({id(p) for p in engine._plans.values()}) == 1


def _named_node_pods(s, rng, count):
    """Pods whose required node affinity names nodes by metadata.name (DaemonSet pods name one; here
    one to three, sometimes a node that does not exist, sometimes with a label term ORed in)."""
    names = sorted(s.snapshot.table.row_of)
    pods = []
    for i in range(count):
        values = rng.sample(names, rng.choice([1, 1, 1, 2, 3]))
        if rng.random() < 0.1:
            values.append("no-such-node")
        # (the API allows one value per metadata.name term: several nodes are several terms)
        terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [v]}]} for v in values]
        if rng.random() < 0.1:  # a term without a name: NodeAffinity's PreFilter then names no nodes
            terms.append({"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]})
        pod = random_pod(rng, 10_000 + i)
        manifest = {"metadata": {"name": f"ds-{i}", "namespace": "default", "uid": f"ds-{i}"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {
                        "cpu": rng.choice(["100m", "500m", "2"]), "memory": "64Mi"}}}],
                             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                 "nodeSelectorTerms": terms}}}}}
        pods.append(Pod.from_manifest(manifest) if rng.random() < 0.5 else pod)
    return pods


@pytest.mark.parametrize("config", ["default", "few-nodes", "score-all-nodes"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_pods_whose_prefilter_names_nodes_place_as_the_plugin_calls(config, seed):
    """A PreFilterResult naming nodes restricts the fused pass to them: same node, status, message,
    start index and RNG state as the plugin-call path (which filters the named nodes only)."""
    def run(compiled):
        node_list, pods = random_cluster(seed, 120, 200)
        rng = random.Random(seed * 17 + 3)
        s = Scheduler(load_config({**V1, **CONFIGS[config]}), seed=seed)
        s.use_compiled_cycle = compiled
        s.add_nodes(node_list)
        s.add_pods(pods)
        s.add_pods(_named_node_pods(s, rng, 120))
        results = s.run()
        return s, ([(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results],
                   s.next_start_node_index, s.rng.bit_generator.state)
    fused, got = run(True)
    _, want = run(False)
    assert got == want
    engine = _engine(fused)
    narrowed = [p for p in engine._plans.values() if getattr(p, "narrowed", None) is not None]
    assert narrowed and engine.fused_cycles >= 30, (engine.fused_cycles, engine.declined_cycles)


def test_numfeasiblenodestofind_counts_the_named_nodes():
    """With 150 of 300 nodes named and percentageOfNodesToScore 50, upstream looks for
    numFeasibleNodesToFind(50, 150) = 100 feasible nodes (not 150, the count for all nodes): which
    node wins and where the next cycle starts depend on it."""
    def run(compiled):
        s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 50}), seed=7)
        s.use_compiled_cycle = compiled
        rng = random.Random(7)
        s.add_nodes([make_node(f"n{i:03d}", cpu=str(rng.choice([4, 8, 16])), memory="32Gi") for i in range(300)])
        named = [f"n{i:03d}" for i in range(0, 300, 2)]
        terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in named]
        s.add_pods([Pod.from_manifest({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"p{i}"},
                                       "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                           "requests": {"cpu": "1", "memory": "1Gi"}}}],
                                                "affinity": {"nodeAffinity": {
                                                    "requiredDuringSchedulingIgnoredDuringExecution": {
                                                        "nodeSelectorTerms": terms}}}}}) for i in range(60)])
        results = s.run()
        return s, [(r.pod.name, r.node_name, r.status) for r in results], s.next_start_node_index
    fused, *got = run(True)
    _, *want = run(False)
    assert got == want
    assert _engine(fused).fused_cycles == 60


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pods_of_one_spec_in_a_row_follow_changes_between_them(seed):
    """Consecutive pods of one spec find the last cycle's plan without a lookup
    (``CompiledCycle._last_lookup``) only while its key is theirs: nodes added, and a running pod
    with required anti-affinity against them appearing and going (InterPodAffinity's column
    guard), between attempts, decide as the plugin calls."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}

    def run(compiled):
        rng = random.Random(seed)
        s = Scheduler(load_config(V1), seed=seed)
        s.use_compiled_cycle = compiled
        s.add_nodes([make_node(f"n{i}", cpu=str(4 + i % 3), memory="32Gi",
                               labels={"topology.kubernetes.io/zone": f"z{i % 3}"}) for i in range(60)])
        template = make_pod("web", labels={"app": "web"}, requests={"cpu": "300m", "memory": "1Gi"})
        out, guards, added = [], 0, 0
        for step in range(40):
            s.add_pods([template.replace(name=f"w{step}-{j}", uid=f"uid-w{step}-{j}") for j in range(4)])
            s.run(max_attempts=rng.randint(1, 4))  # some pods stay queued across the change below
            change = rng.random()
            if change < 0.3:
                s.add_nodes([make_node(f"late{added}", cpu="8", memory="32Gi",
                                       labels={"topology.kubernetes.io/zone": f"z{rng.randrange(3)}"})])
                added += 1
            elif change < 0.65 and not guards:
                node = f"n{rng.randrange(60)}"
                s.add_pods([make_pod("guard", node_name=node, labels={"app": "guard"}, affinity=anti)])
                guards = 1
            elif guards:
                s.delete_pod(s.cluster.get_pod("default", "guard"))
                guards = 0
        s.run()
        return [(r.pod.name, r.node_name, r.status, r.message) for r in s.pod_results()], \
            s.next_start_node_index, s.rng.bit_generator.state, s

    *got, fused = run(True)
    *want, _ = run(False)
    assert got == want
    engine = _engine(fused)
    assert engine.fused_cycles >= 60, (engine.fused_cycles, engine.declined_cycles)
