"""``--rescale-no-sample`` on a case whose measured pods can only land on nodes the config creates
with a fixed count (``measured_pod_room``): the rescale is capped at the room those nodes' pod
slots leave, or refused with the reason, instead of a try whose extra pods stay unschedulable
(SchedulingDaemonset x4: 120,000 pods pinned to one node of 90,000 slots; SchedulingWhileGated:
one node, nothing sizes it)."""
import pytest

from fastsched.perf import load_perf_config, run_perf
from fastsched.perf import runner as perf_runner
from fastsched.perf.metrics import PhaseStats, WorkloadResult
from fastsched.perf.runner import measured_pod_room

from .conftest import POD
from .test_rescale_no_sample import V137


@pytest.mark.parametrize("case, room", [
    # 30,000 pods pinned by NodeAffinity (matchFields metadata.name) to the one node of 90,000
    # pod slots (count: 1); the 15,000 nodes of $initNodes are not theirs
    ("SchedulingDaemonset", (90000, 30000)),
    # one node of 90,000 slots: the 20,000 deleting pods take theirs (counted, though deleted at
    # 50/s), the 10,000 gated ones none
    ("SchedulingWhileGated", (70000, 20000)),
    # the measured pods can land on nodes a count parameter scales: the cluster's scaling sizes them
    ("SchedulingBasic", None),
    ("SchedulingDeletedPodsWithFinalizers", None),
    ("SchedulingWithExtendedResource", None),
    # churn recreates nodes: not bounded from the config
    ("SchedulingWithMixedChurn", None),
])
def test_the_room_of_upstreams_misc_cases(case, room):
    config = load_perf_config(V137 / "misc" / "performance-config.yaml")
    tc = config.test_case(case)
    w = next(w for w in tc.workloads if w.threshold)
    got = measured_pod_room(config, tc, w)
    assert (None if got is None else (got.pods, got.measured)) == room
    if got is not None:
        assert "1 node (scheduler-perf-node)" in got.describe()


NAMED_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: the-node
status:
  capacity: {pods: "30", cpu: "4", memory: 32Gi}
  conditions: [{type: Ready, status: "True"}]
"""
PINNED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pinned-
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [the-node]}]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
"""
GATED_POD = POD.replace("spec:\n", "spec:\n  schedulingGates: [{name: test.k8s.io/hold}]\n")
PINNED = """\
- name: Pinned
  defaultPodTemplatePath: ../templates/pinned.yaml
  workloadTemplate:
  - {opcode: createNodes, count: 1, nodeTemplatePath: ../templates/node.yaml}
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createPods, countParam: $gated, podTemplatePath: ../templates/gated.yaml, skipWaitToCompletion: true}
  - {opcode: createPods, countParam: $init, namespace: init}
  - {opcode: createPods, countParam: $measured, collectMetrics: true}
  workloads:
  - {name: w, labels: [performance], threshold: 1, params: {nodes: 2, gated: 5, init: 3, measured: 9}}
"""


def _config(perf_dir, text=PINNED):
    return load_perf_config(perf_dir(text, node__yaml=NAMED_NODE, pinned__yaml=PINNED_POD, gated__yaml=GATED_POD,
                                     pod__yaml=POD))


def test_the_room_is_the_pinned_nodes_slots_less_the_earlier_pods_pinned_there(perf_dir):
    config = _config(perf_dir)
    tc = config.test_case("Pinned")
    room = measured_pod_room(config, tc, tc.workloads[0])
    # 30 slots, 3 earlier pinned pods; the gated ones take none
    assert (room.pods, room.measured, room.max_scale) == (27, 9, 3.0)
    assert room.fits(3) and not room.fits(3.01)
    # the earlier pods can land elsewhere too: they may not take the pinned node's slots
    other = _config(perf_dir, PINNED.replace("namespace: init}", "namespace: init, podTemplatePath: ../templates/pod.yaml}"))
    assert measured_pod_room(other, other.test_case("Pinned"), other.test_case("Pinned").workloads[0]).pods == 30
    # a nodeAllocatableStrategy sets the slots
    strat = _config(perf_dir, PINNED.replace("nodeTemplatePath: ../templates/node.yaml}",
                                             "nodeTemplatePath: ../templates/node.yaml, nodeAllocatableStrategy: "
                                             "{nodeAllocatable: {pods: \"60\"}}}"))
    assert measured_pod_room(strat, strat.test_case("Pinned"), strat.test_case("Pinned").workloads[0]).pods == 57


def test_no_room_when_a_scaled_node_can_take_the_measured_pods(perf_dir):
    # the measured pods without the pin land on the $nodes nodes too: the cluster's scaling sizes them
    config = _config(perf_dir, PINNED.replace("collectMetrics: true}",
                                              "collectMetrics: true, podTemplatePath: ../templates/pod.yaml}"))
    tc = config.test_case("Pinned")
    assert measured_pod_room(config, tc, tc.workloads[0]) is None


def _fake(monkeypatch, samples_per: int, fit: int = 27):
    calls = []

    def fake(config, tc, w, **kw):
        m = w.params["measured"]
        calls.append(m)
        if m > fit:
            return WorkloadResult(tc.name, w.name, "failed", virtual_seconds=1.0, unschedulable_pods=m - fit,
                                  reason="op 4 (createPods): timed out after 60s waiting for pods: Unschedulable")
        samples = m // samples_per
        return WorkloadResult(tc.name, w.name, "passed", threshold=1, virtual_seconds=1.0,
                              measured=float(m) if samples else None,
                              phases=[PhaseStats("m", ["ns"], pods_scheduled=m, seconds=1.0, throughput_samples=samples)])

    monkeypatch.setattr(perf_runner, "run_workload", fake)
    return calls


def test_the_scale_is_capped_at_the_room(perf_dir, monkeypatch):
    calls = _fake(monkeypatch, 9)
    (r,) = run_perf(_config(perf_dir), workload="w", rescale=4, rescale_min_samples=3).results
    # x4 (36 pods) does not fit 27: x3 instead, which keeps 3 samples
    assert calls == [9, 27]
    rs = r.rescaled
    assert rs.status == "passed" and rs.scaled_params == {"measured": 27} and rs.throughput_samples == 3
    assert not rs.scaled_cluster_params
    assert rs.warnings == ["rescale capped at x3 instead of x4: the measured pods can only go to 1 node (the-node), "
                           "which the config creates with a fixed count (no count parameter scales them): room for "
                           "27 measured pods (the config's: 9, at most x3)"]


def test_too_few_samples_at_the_room_ends_the_tries_saying_so(perf_dir, monkeypatch):
    calls = _fake(monkeypatch, 20)
    (r,) = run_perf(_config(perf_dir), workload="w", rescale=4, rescale_min_samples=3).results
    assert calls == [9, 27]  # no try beyond the room (x3 keeps 1 sample: the step asks x3 more)
    rs = r.rescaled
    assert rs.status == "passed" and rs.throughput_samples == 1
    assert rs.reason.startswith("kept fewer than 3 samples and x9 was asked, but no rescaled try bigger than x3 fits: ")


def test_a_case_without_room_for_one_more_pod_is_not_rescaled(perf_dir, monkeypatch):
    calls = _fake(monkeypatch, 100)
    (r,) = run_perf(_config(perf_dir, PINNED.replace("init: 3", "init: 21")), workload="w", rescale=4).results
    assert calls == [9]
    rs = r.rescaled
    assert rs.status == "skipped"
    assert rs.reason == ("not rescaled: no rescaled try bigger than x1 fits: the measured pods can only go to 1 node "
                         "(the-node), which the config creates with a fixed count (no count parameter scales them): "
                         "room for 9 measured pods (the config's: 9, at most x1)")


def test_an_overflow_within_the_room_does_not_scale_the_cluster(perf_dir, monkeypatch):
    # the room says 27 fit; the run finds fewer (a resource, a taint): the other nodes are not the pods'
    calls = _fake(monkeypatch, 100, fit=20)
    (r,) = run_perf(_config(perf_dir), workload="w", rescale=4).results
    assert calls == [9, 27]
    rs = r.rescaled
    assert rs.status == "failed" and not rs.scaled_cluster_params
    assert "no count parameter makes room for them: the measured pods can only go to 1 node (the-node)" in rs.reason


def test_a_real_run_capped_at_the_pinned_nodes_room(perf_dir, monkeypatch):
    monkeypatch.setattr(perf_runner, "RESCALE_TRIES", 1)
    (r,) = run_perf(_config(perf_dir), workload="w", rescale=4, cpu_time=True).results
    assert r.status == "passed"
    rs = r.rescaled
    # 3 init + 27 measured pods on the-node's 30 slots: all bound, none left over
    assert rs.status == "passed" and rs.scaled_params == {"measured": 27} and rs.pods_scheduled == 30
    assert rs.warnings and rs.warnings[-1].startswith("rescale capped at x3 instead of x4")


def test_the_cli_and_json_say_the_rescale_was_capped(perf_dir, monkeypatch, capsys):
    import json

    from .test_cli_perf import run

    monkeypatch.setattr(perf_runner, "RESCALE_TRIES", 1)
    path = perf_dir(PINNED, node__yaml=NAMED_NODE, pinned__yaml=PINNED_POD, gated__yaml=GATED_POD, pod__yaml=POD)
    _, out, _ = run(capsys, "perf", path, "--workload", "w", "--cpu-time", "--rescale-no-sample", "4")
    out = " ".join(out.split())
    assert "Pinned/w rescaled: rescale capped at x3 instead of x4: the measured pods can only go to 1 node" in out
    _, out, _ = run(capsys, "perf", path, "--workload", "w", "--cpu-time", "--rescale-no-sample", "4", "--json")
    (r,) = json.loads(out)["results"]
    assert r["rescaled"]["warnings"][-1].startswith("rescale capped at x3 instead of x4: ")
