"""Decision records (Scheduler(record=...)) checked against outcomes known in advance."""
import json

import numpy as np
import pytest

from fastsched.extender.testing import ReferenceExtender
from fastsched.framework import Code, PermitPlugin, PreBindPlugin, ReservePlugin, Status
from fastsched.runtime import Registry
from fastsched.scheduler import Scheduler
from fastsched.scheduler.schedule_one import num_feasible_nodes_to_find
from fastsched.scheduler.records import KSS_KEYS, KSS_RESULT_HISTORY_KEY, AttemptRecord, kss_annotations
from fastsched.testing import config_enabling, make_node, make_pod


def nodes(n, cpu="4", memory="8Gi"):
    return [make_node(f"node-{i}", cpu=cpu, memory=memory,
                      labels={"topology.kubernetes.io/zone": f"zone-{i % 2}"}) for i in range(n)]


class RejectFirstReserve(ReservePlugin):
    """Rejects the first Reserve it sees (a quota check losing a race), then accepts."""

    def __init__(self):
        self.calls = 0

    def name(self):
        return "QuotaReserve"

    def reserve(self, state, pod, node_name):
        self.calls += 1
        if self.calls == 1:
            return Status(Code.UNSCHEDULABLE, "quota exhausted")
        return None

    def unreserve(self, state, pod, node_name):
        pass


class FailFirstPreBind(PreBindPlugin):
    """Fails the first PreBind (a volume attach timing out), then succeeds."""

    def __init__(self):
        self.calls = 0

    def name(self):
        return "AttachVolume"

    def pre_bind(self, state, pod, node_name):
        self.calls += 1
        return Status(Code.ERROR, "attach timed out") if self.calls == 1 else None


def scheduler_with(plugin, point, record="all"):
    name = plugin.name()
    s = Scheduler(config_enabling(name, point), registry=Registry({name: lambda args, handle: plugin}), record=record)
    s.add_nodes(nodes(3))
    return s


def test_reserve_rejection_is_recorded_with_the_plugin_and_the_node_it_had_chosen():
    s = scheduler_with(RejectFirstReserve(), "reserve")
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run(until=400)  # an Unschedulable pod is retried by the 5-minute flush
    assert r.status == "Scheduled" and r.attempts == 2
    first, second = r.history
    assert first.outcome == "Unschedulable" and first.selected_node
    assert first.reserve["QuotaReserve"].code() == Code.UNSCHEDULABLE
    assert first.reserve["QuotaReserve"].message() == "quota exhausted"
    # Reserve stopped there: nothing of the binding cycle ran
    assert first.permit == {} and first.pre_bind == {} and first.bind == {}
    assert "quota exhausted" in first.message
    # every node passed Filter on the first attempt: the rejection came after selectHost
    assert first.nodes_examined == 3 and (first.filter_codes == 0).all()
    assert second.outcome == "Scheduled" and second.reserve["QuotaReserve"] is None
    assert second.bind == {"DefaultBinder": None} and second.selected_node == r.node_name
    kss = kss_attempt(first)
    assert json.loads(kss[KSS_KEYS["reserve"]])["QuotaReserve"] == "quota exhausted"


@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_prebind_failure_is_recorded_and_the_retry_binds(n_pods):
    s = scheduler_with(FailFirstPreBind(), "preBind")
    s.add_pods([make_pod(f"p{i}", cpu="10m") for i in range(n_pods)])
    results = s.run()
    # only the first PreBind call fails: p0 binds on its retry, the others at their first attempt
    assert [r.status for r in results] == ["Scheduled"] * n_pods
    assert [r.attempts for r in results] == [2] + [1] * (n_pods - 1)
    r = results[0]
    first, second = r.history
    assert first.outcome == "Error"
    assert first.message == 'running PreBind plugin "AttachVolume": attach timed out'
    assert first.pre_bind["AttachVolume"].message() == "attach timed out"
    assert first.reserve and all(st is None for st in first.reserve.values())  # Reserve had passed
    assert first.bind == {}  # Bind never ran
    assert second.pre_bind["AttachVolume"] is None and second.bind == {"DefaultBinder": None}
    history = json.loads(r.kss_annotations()[KSS_RESULT_HISTORY_KEY])
    assert [json.loads(h[KSS_KEYS["prebind"]])["AttachVolume"] for h in history] == ["attach timed out", "success"]
    for other in results[1:]:
        (only,) = other.history
        assert only.outcome == "Scheduled" and only.pre_bind["AttachVolume"] is None


def test_preemption_records_postfilter_nominated_node_and_victims():
    s = Scheduler(record="all")
    s.add_nodes(nodes(2, cpu="2"))
    s.add_pods([make_pod("low-a", cpu="2", priority=1, node_name="node-0"),
                make_pod("low-b", cpu="2", priority=5, node_name="node-1")])
    s.add_pod(make_pod("vip", cpu="2", priority=100))
    (r,) = s.run()
    assert r.status == "Scheduled" and r.node_name == "node-0"
    first, second = r.history
    assert first.outcome == "Unschedulable"
    assert first.rejected_by() == {"NodeResourcesFit": {"node-0": "Insufficient cpu", "node-1": "Insufficient cpu"}}
    # preemption succeeded: v1.37's Success carries where and how many victims (preemption.go Preempt)
    post = first.post_filter["DefaultPreemption"]
    assert post.is_success() and post.message() == ("preemption: found a potential placement for pod on node "
                                                    "node-0, preempting 1 victims")
    assert first.nominated_node_name == "node-0" and first.victims == [("default/low-a", "node-0")]
    # the retry tries its nominated node first, and binds there
    assert second.nominated_node == "node-0" and second.nominated_node_status is None
    assert second.outcome == "Scheduled" and second.selected_node == "node-0"
    post = json.loads(kss_attempt(first)[KSS_KEYS["postfilter"]])
    assert post == {"node-0": {"DefaultPreemption": "preemption victim"}, "node-1": {}}


def test_extender_filtering_is_recorded_and_differs_from_the_plugins_verdicts():
    with ReferenceExtender(filter_reject={"node-0": "no fpga"}, prioritize_scores={"node-2": 3}) as ext:
        cfg = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
extenders:
  - {{urlPrefix: "{ext.url}", filterVerb: filter, prioritizeVerb: prioritize, weight: 2}}
"""
        s = Scheduler(cfg, seed=1, record="all")
        s.add_nodes(nodes(3))
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run()
    (rec,) = r.history
    assert (rec.filter_codes == 0).all()  # every plugin passed every node ...
    (ef,) = rec.extender_filter
    assert ef["failed"] == {"node-0": "no fpga"} and sorted(ef["kept"]) == ["node-1", "node-2"]
    assert rec.feasible_nodes() == ["node-1", "node-2"] or sorted(rec.feasible_nodes()) == ["node-1", "node-2"]
    assert rec.rejected_by() == {f"extender:{ext.url}": {"node-0": "no fpga"}}
    assert set(rec.score_node_names.tolist()) == {"node-1", "node-2"}  # ... node-0 was never scored
    (ep,) = rec.extender_prioritize
    assert ep["weight"] == 2 and ep["scores"]["node-2"] == 3
    table = rec.score_table()
    assert table[0]["node"] == "node-2" == r.node_name == rec.selected_node
    # the extender's 3 x 2 x 10 = 60 is in the total beside the plugins' weighted scores
    plugin_sum = sum(d["weighted"] for d in table[0]["plugins"].values())
    assert table[0]["total"] - plugin_sum == 60
    ann = r.kss_annotations()
    ext_filter = json.loads(ann[KSS_KEYS["extender_filter"]])
    assert ext_filter[ext.url]["FailedNodes"] == {"node-0": "no fpga"}
    assert ext_filter[ext.url]["NodeNames"] == ef["kept"]
    assert json.loads(ann[KSS_KEYS["extender_prioritize"]])[ext.url] == [{"Host": "node-1", "Score": 0},
                                                                          {"Host": "node-2", "Score": 3}]


def test_filter_rejections_name_plugin_reason_and_unexamined_nodes():
    s = Scheduler(record="all")
    s.add_nodes([make_node("small", cpu="1"),
                 make_node("tainted", cpu="8", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
                 make_node("big", cpu="8")])
    s.add_pod(make_pod("p", cpu="2"))
    (r,) = s.run()
    (rec,) = r.history
    assert r.node_name == "big" and rec.selected_node == "big"
    assert rec.rejected_by() == {"NodeResourcesFit": {"small": "Insufficient cpu"},
                                 "TaintToleration": {"tainted": "node(s) had untolerated taint(s)"}}
    verdicts = rec.filter_verdicts()
    # plugins run in profile order and stop at the first rejection
    order = rec.filter_plugins
    assert list(verdicts["tainted"]) == order[:order.index("TaintToleration") + 1]
    assert verdicts["tainted"]["TaintToleration"] == "node(s) had untolerated taint(s)"
    assert all(v == "passed" for v in verdicts["big"].values())
    assert rec.nodes_total == 3 and rec.nodes_not_examined == 0
    assert rec.score_table() == []  # one feasible node: upstream does not score


def test_unexamined_nodes_are_counted_when_upstream_stops_early():
    s = Scheduler(record="all")
    s.add_nodes([make_node(f"n{i:03d}", cpu="4") for i in range(300)])
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    (rec,) = r.history
    # 300 nodes: numFeasibleNodesToFind is 48% of them (144); upstream stops at the 145th feasible node
    k = num_feasible_nodes_to_find(0, 300)
    assert k == 144 and rec.nodes_examined == k and rec.nodes_not_examined == 300 - k
    assert len(rec.score_node_names) == k and rec.raw_scores.shape == (len(rec.score_plugins), k)
    assert rec.weighted_scores.shape == rec.raw_scores.shape
    assert (rec.total_scores == rec.weighted_scores.sum(axis=0)).all()


@pytest.mark.parametrize("timeout,shown", [(0.5, "500ms"), (90.0, "1m30s"), (-5.0, "-5s"), (-90.0, "-1m30s")])
def test_permit_timeouts_are_recorded_as_go_durations(timeout, shown):
    """KSS writes the timeout with Go's Duration.String(): sub-second ones in ms, negative ones
    (valid upstream: the timer fires at once) with their sign."""
    class Gate(PermitPlugin):
        def name(self):
            return "Gate"

        def permit(self, state, pod, node_name):
            return Status(Code.WAIT), timeout

    s = scheduler_with(Gate(), "permit")
    s.add_pod(make_pod("p"))
    (r,) = s.run(until=200)
    rec = r.history[0]
    assert json.loads(kss_attempt(rec)[KSS_KEYS["permit_timeout"]]) == {"Gate": shown}
    assert rec.permit_wait == f"rejected due to timeout after waiting {shown} at plugin Gate"


def test_permit_wait_and_its_outcome_are_recorded():
    class Gate(PermitPlugin):
        def name(self):
            return "Gate"

        def permit(self, state, pod, node_name):
            return Status(Code.WAIT), 30.0

    s = scheduler_with(Gate(), "permit")
    s.add_pod(make_pod("p"))
    (r,) = s.run(until=40)
    (rec,) = r.history
    assert rec.permit["Gate"].code() == Code.WAIT and rec.permit_timeouts == {"Gate": 30.0}
    assert rec.permit_wait == "rejected due to timeout after waiting 30s at plugin Gate"
    assert rec.outcome == "Unschedulable"
    kss = kss_attempt(rec)
    assert json.loads(kss[KSS_KEYS["permit"]]) == {"Gate": "wait"}
    assert json.loads(kss[KSS_KEYS["permit_timeout"]]) == {"Gate": "30s"}


def test_failures_mode_keeps_only_pods_that_failed():
    s = Scheduler(record="failures")
    s.add_nodes(nodes(2, cpu="2"))
    s.add_pods([make_pod("fits", cpu="1"), make_pod("never", cpu="8")])
    fits, never = s.run()
    assert fits.status == "Scheduled" and fits.history == ()
    assert never.status == "Unschedulable" and [h.outcome for h in never.history] == ["Unschedulable"]


def test_record_off_by_default_keeps_nothing_and_bad_modes_are_refused():
    s = Scheduler()
    s.add_nodes(nodes(2))
    s.add_pod(make_pod("p"))
    (r,) = s.run()
    assert r.history == () and r.kss_annotations() == {}
    assert s.profiles["default-scheduler"].decision_sink is None
    with pytest.raises(ValueError, match="record must be one of"):
        Scheduler(record="everything")


def test_kss_export_has_every_key_of_the_simulator():
    s = Scheduler(record="all")
    s.add_nodes(nodes(3))
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    ann = r.kss_annotations()
    assert set(ann) == set(KSS_KEYS.values()) | {KSS_RESULT_HISTORY_KEY}
    assert ann["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == r.node_name
    score = json.loads(ann["kube-scheduler-simulator.sigs.k8s.io/score-result"])
    final = json.loads(ann["kube-scheduler-simulator.sigs.k8s.io/finalscore-result"])
    assert set(score) == set(final) == {"node-0", "node-1", "node-2"}
    rec = r.history[0]
    j = rec.score_plugins.index("NodeResourcesBalancedAllocation")
    for node, per_plugin in final.items():
        i = rec.score_node_names.tolist().index(node)
        # strings of integers, as KSS writes them: finalscore = normalized x weight
        assert per_plugin["NodeResourcesBalancedAllocation"] == str(int(rec.normalized_scores[j, i] * rec.score_weights[j]))
    filt = json.loads(ann["kube-scheduler-simulator.sigs.k8s.io/filter-result"])
    assert filt["node-0"]["NodeResourcesFit"] == "passed"
    assert json.loads(ann["kube-scheduler-simulator.sigs.k8s.io/prefilter-result-status"])["NodeResourcesFit"] == "success"
    assert json.loads(ann["kube-scheduler-simulator.sigs.k8s.io/bind-result"]) == {"DefaultBinder": "success"}
    assert len(json.loads(ann[KSS_RESULT_HISTORY_KEY])) == 1
    json.dumps(rec.as_dict())  # plain JSON


def test_recorded_placements_equal_unrecorded_ones():
    from fastsched.testing import random_cluster

    placements = []
    for record in (None, "all"):
        s = Scheduler(seed=3, record=record)
        cluster_nodes, running = random_cluster(seed=5, n_nodes=60, n_pods=80)
        s.add_nodes(cluster_nodes)
        s.add_pods(running)
        s.add_pods([make_pod(f"new-{i}", cpu=f"{200 + 50 * (i % 7)}m", memory="256Mi") for i in range(120)])
        placements.append([(r.pod.name, r.status, r.node_name) for r in s.run()])
    assert placements[0] == placements[1]


def test_record_memory_is_arrays_of_a_few_bytes_per_node():
    s = Scheduler(record="all")
    s.add_nodes([make_node(f"n{i:04d}", cpu="4") for i in range(1000)])
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    (rec,) = r.history
    e, sc, p = rec.nodes_examined, len(rec.score_node_names), len(rec.score_plugins)
    assert e > 100 and sc > 100
    assert isinstance(rec.filter_codes, np.ndarray) and rec.filter_codes.dtype == np.int8
    # the documented cost: 15 bytes per examined node, 8 (2P + 2) per scored node, plus the weights
    assert rec.nbytes() == 15 * e + 8 * sc * (2 * p + 2) + 8 * p


def kss_attempt(rec: AttemptRecord) -> dict:
    return json.loads(kss_annotations([rec])[KSS_RESULT_HISTORY_KEY])[0]


def test_notebook_html_of_records_results_and_explanations():
    s = Scheduler(record="all")
    s.add_nodes([make_node("small", cpu="1"), make_node("big-a", cpu="8"), make_node("big-b", cpu="8")])
    s.add_pod(make_pod("p", cpu="2"))
    (r,) = s.run()
    (rec,) = r.history
    page = r._repr_html_()
    assert "default/p" in page and "Scheduled" in page and r.node_name in page
    # the rejection, and the chosen node first in the score table, marked
    assert "NodeResourcesFit" in page and "Insufficient cpu" in page
    chosen_row = page.index('class="fs-chosen"')
    assert page.index(r.node_name, chosen_row) < page.index("</tr>", chosen_row)
    assert rec._repr_html_().startswith("<style>")
    e = s.explain(make_pod("q", cpu="2"))
    ex = e._repr_html_()
    assert "2 of 3 nodes feasible" in ex and "Insufficient cpu" in ex
    assert all(n in ex for n in e.best_nodes)
    unrecorded = Scheduler()
    unrecorded.add_nodes([make_node("n", cpu="1")])
    unrecorded.add_pod(make_pod("x"))
    (res,) = unrecorded.run()
    assert "no decision records" in res._repr_html_()


def test_record_off_keeps_the_fused_cycle_and_recording_takes_the_plugin_calls():
    counts = {}
    for record in (None, "all"):
        s = Scheduler(record=record)
        s.add_nodes(nodes(20))
        s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(30)])
        results = s.run()
        assert all(r.scheduled for r in results)
        engine = s.profiles["default-scheduler"].compiled_cycle
        counts[record] = engine.fused_cycles
        if record:
            assert all(len(r.history) == 1 and r.history[0].nodes_examined > 0 for r in results)
    assert counts[None] == 30  # no record: every pod on the fused kernel, untouched
    assert counts["all"] == 0  # recorded: per-plugin verdicts, from the plugin calls


def test_bounds_keep_the_best_scores_and_the_first_and_latest_attempts():
    s = Scheduler(record="all")
    s.record_top_scores = 3
    s.record_max_attempts = 2
    s.add_nodes([make_node(f"n{i:02d}", cpu="4") for i in range(12)])
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    (rec,) = r.history
    assert len(rec.score_node_names) == 3 and rec.nodes_scored == 12
    assert rec.selected_node in rec.score_node_names.tolist()
    assert rec.raw_scores.shape == rec.normalized_scores.shape == (len(rec.score_plugins), 3)
    kept_totals = sorted(rec.total_scores.tolist(), reverse=True)
    assert kept_totals == sorted(kept_totals, reverse=True) and rec.as_dict()["nodes_scored"] == 12

    # a pod that fails again and again keeps its first attempt and its latest one
    s.add_pod(make_pod("never", cpu="64"))
    for _ in range(4):
        s.add_node(make_node(f"late-{_}", cpu="1"))  # each node event retries it
        s.run()
    never = next(x for x in s.pod_results() if x.pod.name == "never")
    assert never.attempts >= 3 and [h.attempt for h in never.history] == [1, never.attempts]
