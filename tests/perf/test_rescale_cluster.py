"""``--rescale-no-sample`` on a cluster the config fills: when the rescaled run's extra pods do
not fit (they stay Unschedulable), the run is made again with the cluster's node counts and its
init pods and claims scaled by the same factor, and reported as such."""
import json

import pytest

from fastsched.perf import load_perf_config, run_perf
from fastsched.perf import runner as perf_runner
from fastsched.perf.config import PerfConfigError
from fastsched.perf.metrics import PerfReport, PhaseStats, WorkloadResult
from fastsched.perf.report import rescaled_label
from fastsched.perf.runner import _pods_did_not_fit, cluster_count_params

from .conftest import POD
from .test_cli_perf import run
from .test_rescale_no_sample import V137


@pytest.mark.parametrize("topic, case, nodes, fill", [
    # nodes with and without devices (the per-node ResourceSlices share nodesWithDRA); the claims
    # allocated before the measured pods; numDevices is per node and DeviceClass counts are not
    # the cluster's size
    ("dra", "SchedulingWithResourceClaimTemplate", ["nodesWithoutDRA", "nodesWithDRA"], ["initClaims"]),
    ("dra/extendedresource", "ExtendedResource", ["nodesWithoutDRA", "nodesWithDRA"], ["initPods"]),
    # the measured pods alone fill the devices: initPods is the fill param, 0, and stays 0 (scaled())
    ("dra/extendedresource/scoring", "ExtendedResourceScoring", ["nodesWithoutDRA", "nodesWithDRA"], ["initPods"]),
    ("volumes", "SchedulingInTreePVs", ["initNodes"], ["initPods"]),
    ("misc", "SchedulingWithExtendedResource", ["nodesWithoutExtendedResource", "nodesWithExtendedResource"], []),
])
def test_the_cluster_params_of_upstreams_configs(topic, case, nodes, fill):
    config = load_perf_config(V137 / topic / "performance-config.yaml")
    tc = config.test_case(case)
    w = next(w for w in tc.workloads if w.threshold or w.threshold_by_topic)
    assert cluster_count_params(config, tc, w) == (nodes, fill)


SLICE = """\
kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: slice-{{.Index}}
spec:
  driver: test-driver.cdi.k8s.io
  pool: {name: "pool-{{.Index}}", resourceSliceCount: 1}
  {{if .shared}}allNodes: true{{else}}nodeName: node-{{.Index}}{{end}}
  devices: []
"""
CLASS = """\
kind: DeviceClass
apiVersion: resource.k8s.io/v1
metadata:
  name: class-{{.Index}}
"""
CLAIM = """\
kind: ResourceClaim
apiVersion: resource.k8s.io/v1
metadata:
  name: claim-{{.Index}}
spec: {}
"""

SELECTION = """\
- name: Select
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createNodes, count: 3}
  - {opcode: createAny, templatePath: ../templates/slice.yaml, countParam: $slices}
  - {opcode: createAny, templatePath: ../templates/slice.yaml, countParam: $shared, templateParams: {shared: true}}
  - {opcode: createAny, templatePath: ../templates/class.yaml, countParam: $classes}
  - {opcode: createAny, templatePath: ../templates/claim.yaml, countParam: $claims, namespace: init}
  - {opcode: createResourceClaims, countParam: $moreClaims, namespace: init, templatePath: ../templates/claim.yaml}
  - {opcode: createPods, countParam: $init, namespace: init}
  - {opcode: createPods, countParam: $measured, collectMetrics: true}
  - {opcode: createPods, countParam: $after, namespace: after}
  - {opcode: createAny, templatePath: ../templates/claim.yaml, countParam: $afterClaims, namespace: after}
  workloads:
  - {name: w, params: {nodes: 2, slices: 2, shared: 1, classes: 4, claims: 1, moreClaims: 1, init: 1,
                       measured: 1, after: 1, afterClaims: 1}}
"""


def test_node_params_are_create_nodes_and_per_node_objects_and_fill_params_come_before_the_phase(perf_dir):
    config = load_perf_config(perf_dir(SELECTION, pod__yaml=POD, slice__yaml=SLICE, class__yaml=CLASS,
                                       claim__yaml=CLAIM))
    tc = config.test_case("Select")
    nodes, fill = cluster_count_params(config, tc, tc.workloads[0])
    # a ResourceSlice for all nodes and DeviceClasses are not per node; a fixed count has no param
    assert nodes == ["nodes", "slices"]
    # what is created after the measured phase fills nothing the measured pods see
    assert fill == ["claims", "moreClaims", "init"]


def test_scaling_the_cluster_keeps_a_zero_and_refuses_bad_params(perf_dir):
    config = load_perf_config(perf_dir(SELECTION, pod__yaml=POD, slice__yaml=SLICE, class__yaml=CLASS,
                                       claim__yaml=CLAIM))
    w = config.test_case("Select").workloads[0]
    w.params.update(nodes=500, init=0)
    scaled = w.scaled(["measured"], 4, ["nodes", "init"])
    assert (scaled.params["measured"], scaled.params["nodes"], scaled.params["init"]) == (4, 2000, 0)
    assert w.scaled(["measured"], 4).params["nodes"] == 500  # only the measured pods without it
    w.params["nodes"] = "many"
    with pytest.raises(PerfConfigError, match=r"workloads\[0\].params.nodes: parameter nodes has the wrong type "
                                              r"string \(want a number\)"):
        w.scaled(["measured"], 4, ["nodes"])
    w.params["nodes"] = -1
    with pytest.raises(PerfConfigError, match="params.nodes: parameter nodes = -1 cannot be scaled: must not be "
                                              "negative"):
        w.scaled(["measured"], 4, ["nodes"])
    w.params.pop("nodes")
    with pytest.raises(PerfConfigError, match="parameter nodes has the wrong type null"):
        w.scaled(["measured"], 4, ["nodes"])


def _failed(reason: str, unschedulable: int) -> WorkloadResult:
    return WorkloadResult("T", "w", "failed", reason=reason, unschedulable_pods=unschedulable)


@pytest.mark.parametrize("result, fit", [
    (_failed("op 1 (createPods): timed out after 60s waiting for 200 pods to be scheduled", 150), True),
    (_failed("op 1 (createPods): waiting for 200 pods: nothing can make progress any more", 1), True),
    # a slow run: its pods queued or bound, none found unschedulable
    (_failed("op 1 (createPods): timed out after 60s waiting for 200 pods to be scheduled", 0), False),
    # a failure of another kind, with unschedulable pods about
    (_failed("op 3 (createAny): claim.yaml: strict decoding error", 5), False),
    (WorkloadResult("T", "w", "passed", unschedulable_pods=3), False),
])
def test_pods_that_did_not_fit_are_told_from_a_slow_run(result, fit):
    assert _pods_did_not_fit(result) is fit


FILLED = """\
- name: Filled
  defaultPodTemplatePath: ../templates/pod.yaml
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createNodes, countParam: $spare}
  - {opcode: createPods, countParam: $init, namespace: init}
  - {opcode: createPods, countParam: $measured, collectMetrics: true}
  workloads:
  - {name: w, labels: [performance], threshold: 1, params: {nodes: 1, spare: 0, init: 20, measured: 20}}
"""


def test_a_real_run_whose_pods_do_not_fit_scales_the_cluster(perf_dir, monkeypatch):
    monkeypatch.setattr(perf_runner, "RESCALE_TRIES", 1)
    # one node of 4 CPUs holds 40 pods of 100m: 20 init + 20 measured fill it. x4 measured pods
    # (80): 60 stay Unschedulable; the run again with 4 nodes and 80 init pods: 160 in 160 places
    config = load_perf_config(perf_dir(FILLED, pod__yaml=POD))
    (r,) = run_perf(config, workload="w", rescale=4, cpu_time=True).results
    assert r.status == "passed" and r.pods_scheduled == 40 and not r.scaled_cluster_params
    rs = r.rescaled
    assert rs.scaled_params == {"measured": 80}
    assert rs.scaled_cluster_params == {"nodes": 4, "spare": 0, "init": 80}
    assert rs.status == "passed" and rs.pods_scheduled == 160 and rs.nodes == 4
    assert rs.cluster_scaled_because.startswith("op 3 (createPods): ")
    assert "Unschedulable" in rs.cluster_scaled_because


def _fake(monkeypatch, fits_per_node: int, samples_from: int):
    """run_workload replaced: ``fits_per_node`` pods fit a node; a phase keeps a sample per
    ``samples_from`` measured pods. Returns the (measured, nodes, init) of each run."""
    calls = []

    def fake(config, tc, w, **kw):
        p = w.params
        calls.append((p["measured"], p["nodes"], p["init"]))
        if p["init"] + p["measured"] > fits_per_node * (p["nodes"] + p["spare"]):
            return WorkloadResult(tc.name, w.name, "failed", virtual_seconds=1.0, unschedulable_pods=7,
                                  reason="op 3 (createPods): timed out after 60s waiting for pods: Unschedulable")
        samples = p["measured"] // samples_from
        return WorkloadResult(tc.name, w.name, "passed", threshold=w.threshold_for(None), virtual_seconds=1.0,
                              measured=float(p["measured"]) if samples else None,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=p["measured"], seconds=1.0,
                                                 throughput_samples=samples)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    return calls


def test_the_cluster_stays_scaled_for_the_next_tries(perf_dir, monkeypatch):
    config = load_perf_config(perf_dir(FILLED, pod__yaml=POD))
    calls = _fake(monkeypatch, 40, 300)
    (r,) = run_perf(config, workload="w", rescale=4, rescale_min_samples=3).results
    # original; x4 does not fit; x4 with the cluster (0 samples); x16 with it (1 sample: a step
    # of 3 from it, not x4 again); x48 with it (3)
    assert calls == [(20, 1, 20), (80, 1, 20), (80, 4, 80), (320, 16, 320), (960, 48, 960)]
    rs = r.rescaled
    assert rs.scaled_params == {"measured": 960} and rs.throughput_samples == 3
    assert rs.scaled_cluster_params == {"nodes": 48, "spare": 0, "init": 960}
    assert "Unschedulable" in rs.cluster_scaled_because
    assert rs.cluster_scaled_because.endswith(
        "(the original run before it fit the same cluster: the extra pods of x4 overflow it)")
    assert r.scaled_cluster_params == {} and r.measured is None  # the original as it ran


@pytest.mark.parametrize("fits_per_node, calls, cluster", [
    # x4 fits (100 of 200) and keeps 1 sample of 3: a step of 3 to x12, whose 260 pods overflow
    # the one node; x12 again with the cluster x12 too (and 3 samples)
    (200, [(20, 1, 20), (80, 1, 20), (240, 1, 20), (240, 12, 240)], {"nodes": 12, "spare": 0, "init": 240}),
    # every try fits: the cluster is never scaled
    (1000, [(20, 1, 20), (80, 1, 20), (240, 1, 20)], {}),
])
def test_the_cluster_is_scaled_only_when_a_stepped_try_does_not_fit(perf_dir, monkeypatch, fits_per_node, calls,
                                                                    cluster):
    config = load_perf_config(perf_dir(FILLED, pod__yaml=POD))
    made = _fake(monkeypatch, fits_per_node, 80)
    (r,) = run_perf(config, workload="w", rescale=4, rescale_min_samples=3).results
    assert made == calls
    rs = r.rescaled
    assert rs.status == "passed" and rs.throughput_samples == 3 and rs.scaled_params == {"measured": 240}
    assert rs.scaled_cluster_params == cluster
    if cluster:
        assert rs.cluster_scaled_because.endswith(
            "(the x4 run before it fit the same cluster: the extra pods of x12 overflow it)")
        assert rescaled_label(rs) == "measured=240; cluster scaled: nodes=12, spare=0, init=240"
        assert r.as_dict()["rescaled"]["scaled_cluster_params"] == cluster
    else:
        assert rs.cluster_scaled_because == "" and not r.as_dict()["rescaled"]["cluster_scaled"]


def test_a_slow_rescaled_run_does_not_scale_the_cluster(perf_dir, monkeypatch):
    config = load_perf_config(perf_dir(FILLED, pod__yaml=POD))
    calls = []

    def fake(config, tc, w, **kw):
        calls.append(w.params["measured"])
        if w.params["measured"] > 20:
            return WorkloadResult(tc.name, w.name, "failed", virtual_seconds=60.0, unschedulable_pods=0,
                                  reason="op 3 (createPods): timed out after 60s waiting for pods")
        return WorkloadResult(tc.name, w.name, "passed", virtual_seconds=1.0,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=20, seconds=1.0, throughput_samples=0)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    (r,) = run_perf(config, workload="w", rescale=4).results
    assert calls == [20, 80] and not r.rescaled.scaled_cluster_params
    assert r.rescaled.reason.endswith("this run did not scale like its workload, e.g. its cluster has no room "
                                      "for the extra pods)")


def test_without_a_node_count_param_the_failed_run_says_so(perf_dir, monkeypatch):
    config = load_perf_config(perf_dir(FILLED.replace("countParam: $nodes}", "count: 1}").replace(
        "{opcode: createNodes, countParam: $spare}", "{opcode: createNodes, count: 0}").replace(
        "nodes: 1, spare: 0, ", ""), pod__yaml=POD))
    calls = []

    def fake(config, tc, w, **kw):
        calls.append(dict(w.params))
        if w.params["measured"] > 20:
            return WorkloadResult(tc.name, w.name, "failed", unschedulable_pods=60,
                                  reason="op 3 (createPods): timed out after 60s waiting for pods")
        return WorkloadResult(tc.name, w.name, "passed", virtual_seconds=1.0,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=20, seconds=1.0, throughput_samples=0)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    (r,) = run_perf(config, workload="w", rescale=4).results
    assert len(calls) == 2 and r.rescaled.status == "failed" and not r.rescaled.scaled_cluster_params
    assert r.rescaled.reason.endswith("(the original run before it fit the same cluster: the extra pods of x4 "
                                      "overflow it, and no count parameter of a createNodes op sizes the cluster)")


def _cluster_scaled_result() -> WorkloadResult:
    r = WorkloadResult("Dra", "5000pods", "passed", threshold=56,
                       phases=[PhaseStats("m", ["test"], pods_scheduled=2500, seconds=1.3, throughput_samples=1)],
                       measured=989.0, pods_scheduled=5000)
    rs = WorkloadResult("Dra", "5000pods", "passed", threshold=56, measured=2244.0, pods_scheduled=20000,
                        phases=[PhaseStats("m", ["test"], pods_scheduled=10000, seconds=5.0, throughput_samples=4)])
    rs.scaled_params = {"measurePods": 10000}
    rs.scaled_cluster_params = {"nodesWithoutDRA": 0, "nodesWithDRA": 2000, "initClaims": 10000}
    rs.cluster_scaled_because = "op 7 (createPods): timed out after 100s ... Unschedulable: 0/500 nodes are available"
    r.rescaled = rs
    return r


def test_the_table_row_and_json_say_the_cluster_was_scaled():
    from rich.console import Console

    from fastsched.perf.report import results_table

    r = _cluster_scaled_result()
    console = Console(width=300, record=True)
    console.print(results_table(PerfReport(results=[r])))
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in console.export_text().splitlines()
            if line.count("│") > 5]
    assert [row[0] for row in rows] == [
        "Dra/5000pods",
        "rescaled: measurePods=10,000; cluster scaled: nodesWithoutDRA=0, nodesWithDRA=2,000, initClaims=10,000"]
    assert rows[1][4] == "2,244.0" and rows[1][5] == "4" and rows[1][9] == "2,000"
    d = json.loads(json.dumps(r.as_dict()))["rescaled"]
    assert d["cluster_scaled"] is True and d["scaled_params"] == {"measurePods": 10000}
    assert d["scaled_cluster_params"] == {"nodesWithoutDRA": 0, "nodesWithDRA": 2000, "initClaims": 10000}
    assert d["cluster_scaled_because"].startswith("op 7 (createPods): timed out")
    r.rescaled.scaled_cluster_params = {}
    assert json.loads(json.dumps(r.as_dict()))["rescaled"]["cluster_scaled"] is False


def test_a_failed_runs_json_counts_its_unschedulable_pods():
    d = _failed("op 1 (createPods): timed out", 12).as_dict()
    assert d["unschedulable_pods"] == 12
    assert "unschedulable_pods" not in WorkloadResult("T", "w", "passed").as_dict()


def test_the_cli_shows_the_cluster_scaled_row(perf_dir, capsys, monkeypatch):
    monkeypatch.setattr(perf_runner, "RESCALE_TRIES", 1)
    path = perf_dir(FILLED, pod__yaml=POD)
    code, out, err = run(capsys, "perf", path, "--workload", "w", "--rescale-no-sample", "4", "--cpu-time",
                         "--json")
    assert code == 0, err
    (r,) = json.loads(out)["results"]
    assert r["rescaled"]["cluster_scaled"] and r["rescaled"]["scaled_cluster_params"] == {
        "nodes": 4, "spare": 0, "init": 80}
    code, out, err = run(capsys, "perf", path, "--workload", "w", "--rescale-no-sample", "4", "--cpu-time")
    assert code == 0, err
    assert "rescaled: measured=80; cluster scaled: nodes=4, spare=0, init=80" in out
    assert "cluster scaled: the rescaled pods did not fit the config's cluster" in " ".join(out.split())
