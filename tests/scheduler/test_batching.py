"""Opportunistic batching end to end (``Scheduler``): upstream's integration test
``test/integration/scheduler/batch/batch_test.go`` (TestBatchScenarios) transcribed, plus the
hint path's interplay with the compiled cycle, the records and the default profile.

As upstream's test: PodTopologySpread's defaults cleared (``defaultingType: List``,
``defaultConstraints: []``), three more profiles (``mysched``, a copy; ``nosign``, with a Filter
plugin without ``sign_pod``; ``emptysign``, with one that refuses every pod), nodes with ``maxPods``
allocatable, pods that prefer the nodes by ``metadata.name`` with descending weights, created and
scheduled one at a time; "batched" is the default profile's batched-pod counter going up.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.framework.status import Code, Status
from fastsched.runtime.registry import Registry

GI = 1024 ** 3
MI = 1024 ** 2


class NoSign:
    def name(self):
        return "nosign"

    def filter(self, state, pod, node_info):
        return None


class EmptySign(NoSign):
    def name(self):
        return "emptysign"

    def sign_pod(self, pod):
        return None, Status(Code.UNSCHEDULABLE)


def _profile(name: str, extra_filter: str | None = None) -> dict:
    prof: dict = {"schedulerName": name, "pluginConfig": [
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}]}
    if extra_filter:
        prof["plugins"] = {"filter": {"enabled": [{"name": extra_filter}]}}
    return prof


def batch_scheduler(**kw) -> Scheduler:
    registry = Registry()  # out-of-tree plugins, merged into the in-tree ones
    registry.register("nosign", lambda args, handle: NoSign())
    registry.register("emptysign", lambda args, handle: EmptySign())
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [_profile("default-scheduler"), _profile("mysched"), _profile("nosign", "nosign"),
                        _profile("emptysign", "emptysign")]}
    return Scheduler(load_config(cfg), registry=registry, **kw)


def node(name: str, max_pods: int, labels: dict | None = None) -> dict:
    res = {"cpu": "100", "memory": str(4 * GI), "pods": str(max_pods)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"capacity": dict(res), "allocatable": dict(res)}}


def pod(name: str, *, node_selector: dict | None = None, node_affinity: list[str] = (), scheduler: str = "") -> dict:
    preferred = [{"weight": len(node_affinity) - i,
                  "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}}
                 for i, n in enumerate(node_affinity)]
    spec: dict = {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": "10", "memory": str(4 * MI)}}}],
                  "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
                               if preferred else {}}}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def P(name, expected, batched=False, **kw):
    return (name, expected, batched, kw)


SCENARIOS = [
    ("one pod one node", [P("1ppn-batchp1", "1ppn-batchn1")], [("1ppn-batchn1", 1, None)]),
    ("distinct pods on distinct nodes",
     [P("dpdn-batchp1", "dpdn-batchn1", node_selector={"forpod": "1"}),
      P("dpdn-batchp2", "dpdn-batchn2", node_selector={"forpod": "2"}),
      P("dpdn-batchp3", "dpdn-batchn3", node_selector={"forpod": "3"})],
     [("dpdn-batchn3", 10, {"forpod": "3"}), ("dpdn-batchn2", 10, {"forpod": "2"}),
      ("dpdn-batchn1", 10, {"forpod": "1"})]),
    ("three pod batch",
     [P("tpb-batchp1", "tpb-batchn1", node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"]),
      P("tpb-batchp2", "tpb-batchn2", True, node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"]),
      P("tpb-batchp3", "tpb-batchn3", True, node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"])],
     [("tpb-batchn3", 1, None), ("tpb-batchn2", 1, None), ("tpb-batchn1", 1, None)]),
    ("two consecutive batches",
     [P("tcb-batchp1", "tcb-batchn1", node_affinity=["tcb-batchn1", "tcb-batchn2"]),
      P("tcb-batchp2", "tcb-batchn2", True, node_affinity=["tcb-batchn1", "tcb-batchn2"]),
      P("tcb-batchp3", "tcb-batchn4", node_affinity=["tcb-batchn4", "tcb-batchn3"]),
      P("tcb-batchp4", "tcb-batchn3", True, node_affinity=["tcb-batchn4", "tcb-batchn3"])],
     [("tcb-batchn4", 1, None), ("tcb-batchn3", 1, None), ("tcb-batchn2", 1, None), ("tcb-batchn1", 1, None)]),
    ("rescoring enables batching for multiple pods per node",
     [P("mppn-batchp1", "mppn-batchn1", node_affinity=["mppn-batchn1", "mppn-batchn2"]),
      P("mppn-batchp2", "mppn-batchn1", True, node_affinity=["mppn-batchn1", "mppn-batchn2"]),
      P("mppn-batchp3", "mppn-batchn4", node_affinity=["mppn-batchn4", "mppn-batchn3"]),
      P("mppn-batchp4", "mppn-batchn4", True, node_affinity=["mppn-batchn4", "mppn-batchn3"])],
     [("mppn-batchn4", 2, None), ("mppn-batchn3", 2, None), ("mppn-batchn2", 2, None), ("mppn-batchn1", 2, None)]),
    ("rescoring falls back to next cached node when last chosen node is not feasible",
     [P("nfmb-batchp1", "nfmb-batchn1", node_affinity=["nfmb-batchn1", "nfmb-batchn2"]),
      P("nfmb-batchp2", "nfmb-batchn1", True, node_affinity=["nfmb-batchn1", "nfmb-batchn2"]),
      P("nfmb-batchp3", "nfmb-batchn2", True, node_affinity=["nfmb-batchn1", "nfmb-batchn2"])],
     [("nfmb-batchn1", 2, None), ("nfmb-batchn2", 2, None)]),
    ("no batching between schedulers",
     [P("bts--batchp1", "bts--batchn1", node_affinity=["bts--batchn1", "bts--batchn2", "bts--batchn3"]),
      P("bts--batchp2", "bts--batchn2", node_affinity=["bts--batchn1", "bts--batchn2", "bts--batchn3"],
        scheduler="mysched")],
     [("bts--batchn3", 1, None), ("bts--batchn2", 1, None), ("bts--batchn1", 1, None)]),
    ("no batching missing sign",
     [P("nsg-batchp1", "nsg-batchn1", node_affinity=["nsg-batchn1", "nsg-batchn2", "nsg-batchn3"], scheduler="nosign"),
      P("nsg-batchp2", "nsg-batchn2", node_affinity=["nsg-batchn1", "nsg-batchn2", "nsg-batchn3"], scheduler="nosign")],
     [("nsg-batchn3", 1, None), ("nsg-batchn2", 1, None), ("nsg-batchn1", 1, None)]),
    ("no batching empty sign",
     [P("esg-batchp1", "esg-batchn1", node_affinity=["esg-batchn1", "esg-batchn2", "esg-batchn3"],
        scheduler="emptysign"),
      P("esg-batchp2", "esg-batchn2", node_affinity=["esg-batchn1", "esg-batchn2", "esg-batchn3"],
        scheduler="emptysign")],
     [("esg-batchn3", 1, None), ("esg-batchn2", 1, None), ("esg-batchn1", 1, None)]),
    ("unschedulable pod",
     [P("usp-batchp1", "usp-batchn1"), P("usp-batchp2", None)],
     [("usp-batchn1", 1, None)]),
]


def run_scenario(pods, nodes, *, compiled: bool = True):
    s = batch_scheduler()
    s.use_compiled_cycle = compiled
    s.add([node(*n) for n in nodes])
    fw = s.profiles["default-scheduler"]
    placed, batched = [], []
    for name, _, _, kw in pods:
        before = fw.batch.batched_pods
        s.add(pod(name, **kw))
        s.run()
        placed.append(s.get_pod("default", name).node_name or None)
        batched.append(fw.batch.batched_pods > before)
    return placed, batched, s


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plugin-calls"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda sc: sc[0])
def test_batch_scenarios(scenario, compiled):
    _, pods, nodes = scenario
    placed, batched, _ = run_scenario(pods, nodes, compiled=compiled)
    assert placed == [p[1] for p in pods]
    assert batched == [p[2] for p in pods]


def test_profiles_without_signatures_keep_no_state():
    s = batch_scheduler()
    assert s.profiles["nosign"].batch is None and not s.profiles["nosign"].signatures_enabled
    emptysign = s.profiles["emptysign"]
    assert emptysign.signatures_enabled and emptysign.sign_pod(s.profiles["default-scheduler"].plugins_map and
                                                               _pod_obj()) is None


def _pod_obj():
    from fastsched.api import Pod
    return Pod.from_manifest(pod("x"), validate=False)


def test_hinted_attempt_is_recorded_and_skips_scoring():
    s = batch_scheduler(record="all")
    s.add([node(n, 1) for n in ("n3", "n2", "n1")])
    for name in ("p1", "p2"):
        s.add(pod(name, node_affinity=["n1", "n2", "n3"]))
        s.run()
    rec1 = s.results[s.get_pod("default", "p1").uid].history[0]
    rec2 = s.results[s.get_pod("default", "p2").uid].history[0]
    assert (rec1.batch_hint, rec1.batch_hinted) == ("", False) and len(rec1.score_plugins) > 0
    assert (rec2.batch_hint, rec2.batch_hinted) == ("n2", True)
    assert rec2.selected_node == "n2" and rec2.filter_node_names.tolist() == ["n2"]
    assert len(rec2.score_node_names) == 0  # the hint is bound without scoring
    d = rec2.as_dict()
    assert d["batch_hint"] == "n2" and d["batch_hinted"] is True


def test_hint_does_not_advance_the_round_robin_start_index():
    s = batch_scheduler()
    s.add([node(n, 1) for n in ("n3", "n2", "n1")])
    s.add(pod("p1", node_affinity=["n1", "n2", "n3"]))
    s.run()
    start = s.next_start_node_index
    s.add(pod("p2", node_affinity=["n1", "n2", "n3"]))
    s.run()
    assert s.get_pod("default", "p2").node_name == "n2"
    assert s.next_start_node_index == start


def test_signed_pods_leave_the_compiled_cycle_unsigned_ones_keep_it():
    s = batch_scheduler()
    s.add([node(f"n{i}", 10) for i in range(4)])
    engine = s.profiles["default-scheduler"].compiled_cycle
    fused = engine.fused_cycles
    unsigned = pod("u1")
    unsigned["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}]
    s.add(unsigned)
    s.run()
    assert engine.fused_cycles == fused + 1  # unsigned and no state: the fused cycle runs
    s.add(pod("s1"))
    s.run()
    assert engine.fused_cycles == fused + 1  # signed: the plugin calls, so that its scores are kept
    assert s.profiles["default-scheduler"].batch.has_state()


def test_fused_and_plugin_call_cycles_batch_alike():
    # the batching variants of generated scenarios, all pods at once: the same placements, the
    # same round-robin index and RNG state, the same hints used and flushes, whether the pods the
    # fused cycle may take (unsigned, no candidates kept) take it or the plugin calls
    from fastsched.testing import oracle

    for cls, seed in (("resources", 3), ("ports", 4), ("images", 5), ("affinity", 6), ("mixed", 7)):
        sc = oracle.batching_variant(oracle.generate(cls, seed), oracle.BATCHING_MODES[seed % 2])
        outcomes = []
        for compiled in (True, False):
            s = Scheduler(load_config(sc["config"]), seed=seed)
            s.use_compiled_cycle = compiled
            s.add(list(sc.get("objects", ())))
            s.add(list(sc["nodes"]))
            if sc.get("pods"):
                s.add(list(sc["pods"]))
            s.add(list(sc["incoming"]))
            s.run()
            fw = next(iter(s.profiles.values()))
            placed = sorted((r.pod.name, r.node_name, str(r.status)) for r in s.results.values())
            outcomes.append((placed, s.next_start_node_index, s.rng.bit_generator.state,
                             fw.batch.batched_pods, dict(fw.batch.flushes)))
        fused, calls = outcomes
        assert fused[:5] == calls[:5], (cls, seed)
        assert fused[3] > 0, (cls, seed)  # hints were used


def test_default_profile_never_batches():
    from fastsched.testing import node_manifest, pod_manifest

    s = Scheduler()
    s.add([node_manifest(f"n{i}") for i in range(3)])
    s.add([pod_manifest(f"p{i}", cpu="100m") for i in range(6)])
    s.run()
    fw = s.profiles["default-scheduler"]
    assert fw.batch is None
    assert all(r.node_name for r in s.results.values())


def test_rejected_hint_counts_as_processed_when_the_search_stops_before_it():
    # upstream: the hint's rejection stays in the diagnosis' NodeToStatus; when the full search
    # (numFeasibleNodesToFind of 200 nodes: 100) stops before the hinted node, processedNodes, hence
    # nextStartNodeIndex, counts it once more
    s = batch_scheduler(record="all")
    names = [f"n{i:03d}" for i in range(200)]
    s.add([node(n, 1) for n in names])
    s.add(pod("p1", node_affinity=["n050", "n060"]))
    s.run()
    assert s.get_pod("default", "p1").node_name == "n050"
    # the hint of the next pod will be n060: fill it behind the scheduler's back
    blocker = pod("blocker")
    blocker["spec"]["nodeName"] = "n060"
    s.add(blocker)
    before = s.next_start_node_index
    s.add(pod("p2", node_affinity=["n050", "n060"]))
    s.run()
    rec = s.results[s.get_pod("default", "p2").uid].history[0]
    assert (rec.batch_hint, rec.batch_hinted) == ("n060", False)
    examined = rec.filter_node_names.tolist()
    assert "n060" not in examined and len(examined) < 200
    assert s.next_start_node_index == (before + len(examined) + 1) % 200
    assert s.get_pod("default", "p2").node_name not in ("n050", "n060", None)
