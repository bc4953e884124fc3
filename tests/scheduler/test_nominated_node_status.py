"""A nominated pod's rejected nominated node stays in the cycle's diagnosis (upstream v1.37.2,
``pkg/scheduler/schedule_one.go``).

``findNodesThatFitPod`` tries the pod's ``status.nominatedNodeName`` (or OpportunisticBatching's
node hint) first: ``evaluateNominatedNode`` runs ``findNodesThatPassFilters`` over that one node,
then the extenders, with the cycle's ``diagnosis``. The diagnosis is passed by value but its
``NodeToStatus`` is a pointer and its ``UnschedulablePlugins`` a set, so a rejection of that node is
written into the maps the full search that follows shares. The full search sets a status only for
the nodes it rejects; when it stops before the nominated node (``numFeasibleNodesToFind``: it stops
at the first feasible node past that many, ``percentageOfNodesToScore`` of at least 100 nodes, or 1
with no Score plugin) or never looks at it (PreFilter named other nodes), the first entry stays:

* ``processedNodes := len(feasibleNodes) + diagnosis.NodeToStatus.Len()`` counts it, so
  ``nextStartNodeIndex`` moves one node further (the one-node evaluation moves nothing by itself);
* ``EvaluatedNodes`` (``len(feasibleNodes) + NodeToStatus.Len()``) counts it too;
* a FitError's message counts its reason, its plugin is among the pod's unschedulable plugins, and
  the PostFilter reads its status (``PodEligibleToPreemptOthers`` gets
  ``NodeToStatus.Get(nominatedNodeName)``).

When the full search does reach the node it sets the node's status again: no extra count.

The expectations below are worked out by hand from those rules (comments give the arithmetic).
"""
from __future__ import annotations

from typing import Any

import pytest

from fastsched import load_config
from fastsched.extender.extender import Extender, ExtenderError, Victims
from fastsched.framework.status import Code, Status
from fastsched.framework.types import FitError
from fastsched.runtime import Registry
from fastsched.scheduler import Scheduler
from fastsched.scheduler.schedule_one import ScheduleOneMixin, ScheduleResult
from fastsched.testing import make_node, make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
#: NodeAffinity's preferred term: 100 x weight 2 for a node labelled good=yes, more than any other
#: Score plugin can tell identical empty-ish nodes apart by, so the best node is unique
PREFER_GOOD = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "preference": {"matchExpressions": [{"key": "good", "operator": "In", "values": ["yes"]}]}}]}}


def _scheduler(config: dict, compiled: bool, **kw: Any) -> Scheduler:
    s = Scheduler(load_config({**V1, **config}), seed=0, **kw)
    s.use_compiled_cycle = compiled
    return s


def _nodes(n: int, width: int, good: tuple[str, ...] = ()) -> list:
    return [make_node(f"n{i:0{width}d}", cpu="4", memory="8Gi", labels={"good": "yes"} if f"n{i:0{width}d}" in good
                      else {}) for i in range(n)]


def _filler(node: str, **kw: Any):
    """A bound pod taking the node's 4 CPUs: the node rejects any pod asking for CPU."""
    return make_pod(f"fill-{node}", uid=f"uid-fill-{node}", cpu="4", node_name=node, **kw)


@pytest.fixture
def results(monkeypatch) -> dict[str, ScheduleResult]:
    """pod name -> the ScheduleResult of its (last) schedulePod on the plugin-call path."""
    got: dict[str, ScheduleResult] = {}
    original = ScheduleOneMixin._schedule_pod

    def recorded(self, fw, state, pod, *args, **kwargs):
        res = original(self, fw, state, pod, *args, **kwargs)
        if type(res) is ScheduleResult:
            got[pod.name] = res
        return res

    monkeypatch.setattr(ScheduleOneMixin, "_schedule_pod", recorded)
    return got


def _place(s: Scheduler, pod) -> tuple[str | None, int]:
    """Schedule one pod alone: (its node, the next start node index after it)."""
    s.add_pods([pod])
    s.run()
    bound = s.get_pod(pod.namespace, pod.name)
    return (bound.node_name or None if bound is not None else None), s.next_start_node_index


# ------------------------------------------------------------------------------------------------
# percentageOfNodesToScore: the sampled search and the nominated node
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("compiled", [True, False])
def test_rejected_nominated_node_counts_when_the_sampled_search_stops_before_it(results, compiled):
    # 300 nodes, percentageOfNodesToScore 10: numFeasibleNodesToFind = max(300*10/100, 100) = 100.
    # n250 is full; good=yes on n050, n200, n280 (one in each window below).
    s = _scheduler({"percentageOfNodesToScore": 10}, compiled)
    s.add_nodes(_nodes(300, 3, good=("n050", "n200", "n280")))
    s.add_pods([_filler("n250")])

    # p0, nominated to n250: evaluateNominatedNode rejects it (Insufficient cpu), NodeToStatus {n250}.
    # The full search from 0 finds n000..n099 (100 feasible) and stops at n100 (the 101st), before
    # n250: processedNodes = 100 + NodeToStatus.Len() 1 = 101, nextStartNodeIndex 0 -> 101;
    # EvaluatedNodes 101, FeasibleNodes 100; the best of n000..n099 is n050.
    p0 = make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name="n250")
    assert _place(s, p0) == ("n050", 101)
    assert (results["p0"].evaluated_nodes, results["p0"].feasible_nodes) == (101, 100)

    # p1 from 101: n101..n200 feasible, n201 stops it; 101 + 100 = 201; the best is n200 (were the
    # index 100, the window n100..n199 would hold no good node)
    assert _place(s, make_pod("p1", uid="uid-p1", cpu="1", affinity=PREFER_GOOD)) == ("n200", 201)
    # p2 from 201: n201..n249 (49), n250 rejected, n251..n299 (49), n000, n001 -> 100 feasible, n002
    # stops it; processed 100 + 1 = 101, (201 + 101) % 300 = 2; the best is n280
    assert _place(s, make_pod("p2", uid="uid-p2", cpu="1", affinity=PREFER_GOOD)) == ("n280", 2)


@pytest.mark.parametrize("compiled", [True, False])
def test_nominated_node_the_sampled_search_reaches_counts_once(results, compiled):
    # As above with n030 full and p0 nominated there: the full search from 0 rejects n030 again
    # (NodeToStatus.Set overwrites the first entry) and finds n000..n029, n031..n100 (100 feasible),
    # stopping at n101: processedNodes = 100 + 1 = 101, no extra count; EvaluatedNodes 101.
    s = _scheduler({"percentageOfNodesToScore": 10}, compiled)
    s.add_nodes(_nodes(300, 3, good=("n050", "n200", "n280")))
    s.add_pods([_filler("n030")])
    p0 = make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name="n030")
    assert _place(s, p0) == ("n050", 101)
    assert (results["p0"].evaluated_nodes, results["p0"].feasible_nodes) == (101, 100)
    assert _place(s, make_pod("p1", uid="uid-p1", cpu="1", affinity=PREFER_GOOD)) == ("n200", 201)


@pytest.mark.parametrize("compiled", [True, False])
def test_nominated_node_that_passes_moves_nothing(results, compiled):
    # p0 nominated to n250, which fits: evaluateNominatedNode returns it, findNodesThatFitPod returns
    # before the full search: the index stays at 0; EvaluatedNodes 1 + NodeToStatus.Len() 0 = 1.
    s = _scheduler({"percentageOfNodesToScore": 10}, compiled)
    s.add_nodes(_nodes(300, 3, good=("n050", "n200")))
    p0 = make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name="n250")
    assert _place(s, p0) == ("n250", 0)
    if not compiled:  # (the compiled cycle places it on the kernel: no plugin-call ScheduleResult)
        assert (results["p0"].evaluated_nodes, results["p0"].feasible_nodes) == (1, 1)


NO_SCORE = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}


@pytest.mark.parametrize("compiled", [True, False])
def test_placements_without_score_plugins(results, compiled):
    # No Score plugin, no extender: numFeasibleNodesToFind is 1, so the search takes the first
    # feasible node from nextStartNodeIndex and stops at the second one. 10 nodes, n07 full.
    s = _scheduler(NO_SCORE, compiled)
    s.add_nodes(_nodes(10, 2))
    s.add_pods([_filler("n07")])

    def nominated(name: str):
        return make_pod(name, uid=f"uid-{name}", cpu="1").replace(nominated_node_name="n07")

    def plain(name: str):
        return make_pod(name, uid=f"uid-{name}", cpu="1")

    # p0 -> n07 rejected first; from 0: n00 feasible, n01 stops it: 1 + {n07} = 2 processed
    assert _place(s, nominated("p0")) == ("n00", 2)
    assert results["p0"].evaluated_nodes == 2
    # p1 from 2: n02, n03 stops it: 1 processed
    assert _place(s, plain("p1")) == ("n02", 3)
    # p2 -> n07 rejected; from 3: n03, n04 stops it: 1 + 1 = 2
    assert _place(s, nominated("p2")) == ("n03", 5)
    assert _place(s, plain("p3")) == ("n05", 6)
    # p4 -> n07 rejected; from 6: n06, n07 rejected again (overwritten), n08 stops it: 1 + 1 = 2
    assert _place(s, nominated("p4")) == ("n06", 8)
    assert results["p4"].evaluated_nodes == 2
    assert _place(s, plain("p5")) == ("n08", 9)
    # a nomination to a node not in the cluster: evaluateNominatedNode's error (logged), no entry
    # from 9: n09, n00 stops it: 1 processed
    ghost = make_pod("p6", uid="uid-p6", cpu="1").replace(nominated_node_name="ghost")
    assert _place(s, ghost) == ("n09", 0)


# ------------------------------------------------------------------------------------------------
# FitError: the nominated node's status in the diagnosis
# ------------------------------------------------------------------------------------------------
NAMED_AB = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in "ab"]}}}
TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.fixture
def fit_errors(monkeypatch) -> list:
    """The FitErrors handleSchedulingFailure gets, in order."""
    got: list = []
    original = ScheduleOneMixin._handle_failure

    def recorded(self, fw, qpi, status, err, *args):
        if isinstance(err, FitError):
            got.append(err)
        return original(self, fw, qpi, status, err, *args)

    monkeypatch.setattr(ScheduleOneMixin, "_handle_failure", recorded)
    return got


@pytest.mark.parametrize("compiled", [True, False])
def test_nominated_node_outside_prefilter_names_stays_in_the_fit_error(fit_errors, compiled):
    # Nodes a..e; a and b full; e tainted. The pod asks NodeAffinity for a or b (PreFilterResult
    # {a, b}) and is nominated to e. evaluateNominatedNode judges e whatever the names:
    # TaintToleration rejects it, NodeToStatus {e}, TaintToleration in UnschedulablePlugins. The
    # full search over {a, b} rejects both (Insufficient cpu) and never sees e; the absent nodes'
    # status is "didn't satisfy plugin(s) [NodeAffinity]". processedNodes = 0 + 3, index 0 -> 3.
    s = _scheduler({}, compiled)
    s.add_nodes([make_node(n, cpu="4", memory="8Gi", taints=[TAINT] if n == "e" else ()) for n in "abcde"])
    s.add_pods([_filler("a"), _filler("b")])
    s.add_pods([make_pod("p", uid="uid-p", cpu="1", affinity=NAMED_AB).replace(nominated_node_name="e")])
    s.run(max_attempts=1)
    (r,) = [r for r in s.pod_results() if r.pod.name == "p"]
    assert (r.status, r.attempts) == ("Unschedulable", 1)
    # FitError: 1 (e's reason) + 2 Insufficient cpu + (5 - 3) absent; the PostFilter (no victims of
    # a lower priority on a and b; e and the absent nodes UnschedulableAndUnresolvable) as before
    assert r.message == ("0/5 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu, "
                         "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/5 nodes are available: "
                         "2 No preemption victims found for incoming pod, 3 Preemption is not helpful for "
                         "scheduling."), r.message
    assert s.next_start_node_index == 3
    (fe,) = fit_errors
    nts = fe.diagnosis.node_to_status
    assert nts.len() == 3 and nts.get("e").plugin() == "TaintToleration"
    assert fe.diagnosis.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit", "TaintToleration"}
    assert fe.diagnosis.pending_plugins == set()


class _RejectAll(Extender):
    """A filtering extender rejecting every node it is sent (Unschedulable)."""

    def name(self) -> str:
        return "reject-all"

    def is_interested(self, pod: Any) -> bool:
        return True

    @property
    def filter_verb(self) -> str:
        return "filter"

    def filter(self, pod: Any, nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        return nodes.select([]), {n: "reject-all says no" for n in nodes.names}, {}

    def prioritize(self, pod: Any, nodes: Any) -> tuple[dict[str, int], int]:
        return {}, 1

    def bind(self, pod: Any, node_name: str) -> None:
        raise AssertionError("not a binder")

    def is_binder(self) -> bool:
        return False

    def supports_preemption(self) -> bool:
        return False

    def process_preemption(self, pod: Any, node_name_to_victims: dict[str, Victims], node_infos: Any
                           ) -> dict[str, Victims]:
        return node_name_to_victims

    def is_ignorable(self) -> bool:
        return False


def test_extenders_reject_the_sample_the_nominated_node_decides_preemption():
    # 300 nodes, percentageOfNodesToScore 10 (100 nodes to find), an extender that rejects every
    # node. n250 holds a lower-priority pod being deleted by an earlier preemption (4 CPUs); the
    # preemptor p (priority 100) comes back nominated to n250.
    # evaluateNominatedNode: n250 Insufficient cpu (Unschedulable), NodeToStatus {n250}. The full
    # search finds n000..n099 and stops at n100; the extender rejects those 100: FitError with
    # NodeToStatus {n250: Insufficient cpu, n000..n099: "reject-all says no"}, processedNodes 101.
    # The PostFilter: PodEligibleToPreemptOthers gets n250's status, Unschedulable (not
    # UnschedulableAndUnresolvable), and n250 holds a lower-priority pod terminating by preemption:
    # not eligible (were n250's status the absent nodes' UnschedulableAndUnresolvable, it would be).
    s = _scheduler({"percentageOfNodesToScore": 10}, True, extenders=[_RejectAll()])
    s.add_nodes(_nodes(300, 3))
    victim = _filler("n250", priority=0).replace(deletion_timestamp=1.0, conditions=(
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},))
    s.add_pods([victim])
    s.add_pods([make_pod("p", uid="uid-p", cpu="1", priority=100).replace(nominated_node_name="n250")])
    s.run(max_attempts=1)
    (r,) = [r for r in s.pod_results() if r.pod.name == "p"]
    assert r.message == ("0/300 nodes are available: 1 Insufficient cpu, 100 reject-all says no. "
                         "preemption: not eligible due to a terminating pod on the nominated node."), r.message
    assert s.next_start_node_index == 101


class _RejectSome(_RejectAll):
    """Rejects the named nodes only (Unschedulable); raises on the calls numbered in ``raise_on``."""

    def __init__(self, reject: tuple[str, ...] = (), raise_on: tuple[int, ...] = ()):
        self.reject, self.raise_on, self.calls = set(reject), raise_on, 0

    def name(self) -> str:
        return "reject-some"

    def filter(self, pod: Any, nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        self.calls += 1
        if self.calls in self.raise_on:
            raise ExtenderError("reject-some is down")
        names = list(nodes.names)
        keep = [i for i, n in enumerate(names) if n not in self.reject]
        return nodes.select(keep), {n: "reject-some says no" for n in names if n in self.reject}, {}


@pytest.mark.parametrize("nominated, evaluated, feasible", [
    # n250 passes the filters, the extender rejects it: NodeToStatus {n250}. The full search from 0
    # finds n000..n099, stops at n100: processedNodes 100 + 1 = 101; the extender keeps the 100:
    # EvaluatedNodes 100 + 1.
    ("n250", 101, 100),
    # n030 passes the filters, the extender rejects it: NodeToStatus {n030}. The full search finds
    # n000..n099, n030 among them (feasible: no status set), stops at n100: processedNodes
    # 100 + NodeToStatus.Len() 1 = 101 (n030 counted twice); the extender rejects n030 again
    # (its status set anew): FeasibleNodes 99, EvaluatedNodes 99 + 1.
    ("n030", 100, 99),
])
def test_extender_rejecting_the_nominated_node(results, nominated, evaluated, feasible):
    s = _scheduler({"percentageOfNodesToScore": 10}, True, extenders=[_RejectSome(reject=(nominated,))])
    s.add_nodes(_nodes(300, 3, good=("n050", "n200")))
    p0 = make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name=nominated)
    assert _place(s, p0) == ("n050", 101)
    assert (results["p0"].evaluated_nodes, results["p0"].feasible_nodes) == (evaluated, feasible)
    # p1 from 101: n101..n200, the best n200
    assert _place(s, make_pod("p1", uid="uid-p1", cpu="1", affinity=PREFER_GOOD)) == ("n200", 201)


def test_extender_error_on_the_nominated_node_is_not_the_cycles():
    # evaluateNominatedNode's error (the extender fails on its first call, for the nominated node
    # n03) is logged; findNodesThatFitPod goes on with the full search (10 nodes: all 10 to find),
    # whose extender call passes every node: the best node n07, in the first attempt.
    s = _scheduler({}, True, extenders=[_RejectSome(raise_on=(1,))])
    s.add_nodes(_nodes(10, 2, good=("n07",)))
    s.add_pods([make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name="n03")])
    s.run(max_attempts=1)
    (r,) = [r for r in s.pod_results() if r.pod.name == "p0"]
    assert (r.status, r.node_name, r.attempts) == ("Scheduled", "n07", 1), r.message


class _ErrorOnB:
    """A Filter plugin failing (Code Error) on node b."""

    def name(self) -> str:
        return "ErrorOnB"

    def filter(self, state, pod, node_info):
        return Status(Code.ERROR, "b is on fire") if node_info.node().name == "b" else None


@pytest.mark.parametrize("compiled", [True, False])
def test_a_filter_error_counts_the_nominated_nodes_status_too(compiled):
    # findNodesThatFitPod counts processedNodes (len(feasibleNodes) + NodeToStatus.Len()) before it
    # returns the full search's error. Nodes a..e, a full; the pod asks NodeAffinity for a or b;
    # ErrorOnB fails on b. The full search over {a, b}: a rejected (Insufficient cpu), b's error.
    # Nominated to e (tainted, outside the names): e's entry stays, one more processed node than
    # for the same pod not nominated. Nominated to a: the search rejects a again, no extra count.
    def index_after(nominated: str) -> int:
        registry = Registry()
        registry.register("ErrorOnB", lambda args, handle: _ErrorOnB())
        cfg = {"profiles": [{"schedulerName": "default-scheduler",
                             "plugins": {"filter": {"enabled": [{"name": "ErrorOnB"}]}}}]}
        s = _scheduler(cfg, compiled, registry=registry)
        s.add_nodes([make_node(n, cpu="4", memory="8Gi", taints=[TAINT] if n == "e" else ()) for n in "abcde"])
        s.add_pods([_filler("a")])
        s.add_pods([make_pod("p", uid="uid-p", cpu="1", affinity=NAMED_AB).replace(nominated_node_name=nominated)])
        s.run(max_attempts=1)
        (r,) = [r for r in s.pod_results() if r.pod.name == "p"]
        assert r.status == "Error" and "b is on fire" in r.message, (r.status, r.message)
        return s.next_start_node_index

    plain = index_after("")
    assert index_after("e") == (plain + 1) % 5
    assert index_after("a") == plain


def test_the_decision_record_of_a_rejected_nominated_node():
    # Recorded (the plugin-call path): the same placement and index as above; the record holds the
    # nominated node's verdict apart from the full search's (n000..n099 examined, n250 not among them).
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 10}), seed=0, record="all")
    s.add_nodes(_nodes(300, 3, good=("n050",)))
    s.add_pods([_filler("n250")])
    p0 = make_pod("p0", uid="uid-p0", cpu="1", affinity=PREFER_GOOD).replace(nominated_node_name="n250")
    assert _place(s, p0) == ("n050", 101)
    (rec,) = s.results[s.get_pod("default", "p0").uid].history
    assert rec.nominated_node == "n250"
    assert rec.nominated_node_status.code() == Code.UNSCHEDULABLE
    assert rec.nominated_node_status.reasons() == ["Insufficient cpu"]
    assert rec.filter_node_names.tolist() == [f"n{i:03d}" for i in range(100)]
    d = rec.as_dict()
    assert d["nominated_node"] == "n250" and d["selected_node"] == "n050"
