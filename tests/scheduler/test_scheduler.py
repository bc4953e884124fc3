"""The Scheduler end to end, with the default profile and custom plugins."""
import random
from collections import Counter

import numpy as np
import pytest

from fastsched import load_config
from fastsched.framework import (BindPlugin, Code, PermitPlugin, ReservePlugin, Status)
from fastsched.runtime import Registry
from fastsched.scheduler import Scheduler
from fastsched.scheduler.schedule_one import num_feasible_nodes_to_find
from fastsched.testing import make_node, make_pod, random_cluster, random_existing_pod


def nodes(n, cpu="4", memory="8Gi", zones=3, **kw):
    return [make_node(f"node-{i:03d}", cpu=cpu, memory=memory,
                      labels={"topology.kubernetes.io/zone": f"zone-{i % zones}"}, **kw) for i in range(n)]


# -- basics ---------------------------------------------------------------------------------------
def test_schedules_and_reports_every_pod():
    s = Scheduler(seed=0)
    s.add_nodes(nodes(4))
    s.add_pods([make_pod(f"p{i}", cpu="1", memory="1Gi") for i in range(20)])
    results = s.run()
    assert [r.pod.name for r in results] == [f"p{i}" for i in range(20)]
    counts = Counter(r.status for r in results)
    assert counts == {"Scheduled": 16, "Unschedulable": 4}
    for r in results:
        if r.scheduled:
            assert r.node_name and r.message == f"Successfully assigned default/{r.pod.name} to {r.node_name}"
            assert r.attempts == 1
        else:
            assert r.node_name is None
            # v1.37: DynamicResources' PostFilter adds no message (dynamicresources.go PostFilter)
            assert r.message == "0/4 nodes are available: 4 Insufficient cpu. " \
                                "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    assert s.metrics.attempts == {"scheduled": 16, "unschedulable": 4, "error": 0}


def test_running_pods_take_capacity():
    s = Scheduler()
    s.add_nodes(nodes(1))
    s.add_pods([make_pod("running", cpu="3", node_name="node-000"), make_pod("new", cpu="2")])
    (r,) = s.run()
    assert r.status == "Unschedulable" and "1 Insufficient cpu" in r.message


def test_fit_error_message_sorts_reason_counts_as_strings():
    s = Scheduler()
    ns = [make_node(f"n{i}", cpu="1") for i in range(10)] + [make_node("t", taints=[{"key": "k", "effect": "NoSchedule"}])]
    s.add_nodes(ns)
    s.add_pod(make_pod("p", cpu="2"))
    (r,) = s.run()
    assert r.message.startswith("0/11 nodes are available: 1 node(s) had untolerated taint(s), "
                                "10 Insufficient cpu.")


def test_no_nodes():
    s = Scheduler()
    s.add_pod(make_pod("p"))
    (r,) = s.run()
    assert r.status == "Unschedulable" and r.message == "no nodes available to schedule pods"


def test_unknown_scheduler_name_is_reported():
    s = Scheduler()
    s.add_nodes(nodes(1))
    s.add_pod(make_pod("p", scheduler_name="other"))
    (r,) = s.run()
    assert r.status == "NoProfile" and r.message == 'profile not found for scheduler name "other"'


def test_gated_pod_waits_until_its_gates_are_removed():
    s = Scheduler()
    s.add_nodes(nodes(1))
    gated = make_pod("g", schedulingGates=[{"name": "a"}, {"name": "b"}])
    s.add_pod(gated)
    (r,) = s.run()
    assert r.status == "Gated" and r.message == "waiting for scheduling gates: [a b]"
    s.update_pod(gated.replace(scheduling_gates=()))
    (r,) = s.run()
    assert r.status == "Scheduled"


def test_deleting_a_running_pod_lets_a_pending_pod_schedule():
    s = Scheduler()
    s.add_nodes(nodes(1, cpu="2"))
    big = make_pod("big", cpu="2", node_name="node-000")
    s.add_pods([big, make_pod("waiting", cpu="1")])
    (r,) = s.run()
    assert r.status == "Unschedulable"
    s.delete_pod(big)
    (r,) = s.run()
    assert r.status == "Scheduled" and r.attempts == 2


def test_node_added_later_unblocks_pods():
    s = Scheduler()
    s.add_pods([make_pod(f"p{i}", cpu="1") for i in range(3)])
    assert {r.status for r in s.run()} == {"Unschedulable"}
    s.add_node(make_node("late", cpu="8"))
    assert {r.node_name for r in s.run()} == {"late"}


def test_priority_orders_the_queue():
    s = Scheduler()
    s.add_nodes(nodes(1, cpu="1"))
    s.add_pods([make_pod("low", cpu="1", priority=1, preemptionPolicy="Never"),
                make_pod("high", cpu="1", priority=100, preemptionPolicy="Never")])
    results = {r.pod.name: r for r in s.run()}
    assert results["high"].status == "Scheduled" and results["low"].status == "Unschedulable"


def test_priority_class_admission():
    s = Scheduler()
    s.add_nodes(nodes(1))
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "vip"}, "value": 1000})
    s.add_pods([make_pod("a", priorityClassName="vip"), make_pod("b", priorityClassName="nope")])
    a, b = s.run()
    assert a.pod.priority == 1000 and a.status == "Scheduled"
    assert b.status == "Error" and b.message == "no PriorityClass with name nope was found"


# -- node sampling -----------------------------------------------------------------------------------
@pytest.mark.parametrize("n,pct,want", [(50, 0, 50), (100, 0, 100), (1000, 0, 420), (5000, 0, 500),
                                        (6000, 0, 300), (1000, 10, 100), (1000, 50, 500), (200, 10, 100)])
def test_num_feasible_nodes_to_find(n, pct, want):
    assert num_feasible_nodes_to_find(pct, n) == want


def test_round_robin_start_index_over_consecutive_pods():
    cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "percentageOfNodesToScore": 10})
    s = Scheduler(cfg)
    s.add_nodes([make_node(f"n{i:03d}", cpu="100") for i in range(300)])  # 300 nodes: k = 100
    s.add_pod(make_pod("a"))
    s.run()
    # 100 feasible nodes kept; the 101st feasible one stops the search and is not counted as processed
    assert s.next_start_node_index == 100
    a = s.results[s._order[0]]
    assert 0 <= int(a.node_name[1:]) < 100
    s.add_pod(make_pod("b"))
    s.run()
    assert s.next_start_node_index == 200
    b = s.results[s._order[1]]
    assert 100 <= int(b.node_name[1:]) < 200


# -- plugins at the later extension points ---------------------------------------------------------
class Gate(PermitPlugin, ReservePlugin):
    """Permit makes every pod wait; Reserve/Unreserve calls are logged."""

    def __init__(self, timeout=30.0):
        self.timeout = timeout
        self.log = []

    def name(self):
        return "Gate"

    def permit(self, state, pod, node_name):
        return Status(Code.WAIT), self.timeout

    def reserve(self, state, pod, node_name):
        self.log.append(("reserve", pod.name))
        return None

    def unreserve(self, state, pod, node_name):
        self.log.append(("unreserve", pod.name))


def gate_scheduler(gate, extra="", **kwargs):
    cfg = load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    permit: {{enabled: [{{name: Gate}}]}}
    reserve: {{enabled: [{{name: Gate}}]}}
{extra}""", registry_names=["Gate", "FailingBinder"])
    s = Scheduler(cfg, registry=Registry({"Gate": lambda a, h: gate, "FailingBinder": lambda a, h: FailingBinder()}),
                  **kwargs)
    s.add_nodes(nodes(2))
    return s


def test_permit_wait_then_allow():
    gate = Gate()
    s = gate_scheduler(gate)
    pod = make_pod("p")
    s.add_pod(pod)
    (r,) = s.run(until=5)
    assert r.status == "Waiting" and s.clock.now() == 5
    fw = s.profiles["default-scheduler"]
    fw.get_waiting_pod(pod.uid).allow("Gate")
    (r,) = s.run()
    assert r.status == "Scheduled" and s.clock.now() == 5


def test_permit_reject_and_timeout_in_virtual_time():
    gate = Gate(timeout=30)
    # NominatedNodeNameForExpectation off: with it on, the rejection's clearing of the nomination
    # made at Permit is a pod update that requeues the pod at once (Gate is interested in every
    # event; test_loop_termination covers that)
    s = gate_scheduler(gate, feature_gates={"NominatedNodeNameForExpectation": False})
    s.add_pod(make_pod("p"))
    (r,) = s.run(max_attempts=1)
    assert r.status == "Waiting" and s.cache.pod_count() == 1  # assumed while waiting
    (r,) = s.run(until=30.5)
    # rejected at t=30: Unreserve ran, the pod was forgotten. Its first failure writes the
    # PodScheduled=False condition (handleSchedulingFailure's updatePod); that pod update, heard
    # back, is an event Gate (no EnqueueExtensions) takes: backoffQ, popped at once (activeQ is
    # empty), so it is retried at t=30 and waits again
    assert gate.log.count(("unreserve", "p")) == 1
    assert r.status == "Waiting" and r.attempts == 2 and s.cache.pod_count() == 1
    (r,) = s.run(until=359)
    # rejected again at t=60 with the same message: the same condition, no patch, no event; it
    # waits in unschedulablePods (its own release does not requeue it, as upstream's
    # handleBindingCycleError defers that move and skips the pod)
    assert r.status == "Unschedulable" and s.cache.pod_count() == 0
    assert r.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gate."
    assert r.attempts == 2 and s.queue.where(r.pod.uid) == "unschedulable"
    (r,) = s.run(until=395)
    # retried at t=390, the first 30 s flush after more than 5 minutes unschedulable; waiting again
    assert r.status == "Waiting" and r.attempts == 3
    assert gate.log.count(("unreserve", "p")) == 2 and s.cache.pod_count() == 1
    fw = s.profiles["default-scheduler"]
    fw.get_waiting_pod(r.pod.uid).reject("Gate", "group gave up")
    (r,) = s.run(until=s.clock.now())
    # a new message, a new condition: that update requeues it (Gate takes every event), and it is
    # retried at once (popped from backoffQ), waiting again
    (condition,) = [c for c in s.cluster.pods[r.pod.uid].conditions if c["type"] == "PodScheduled"]
    assert condition["message"] == "0/1 nodes are available: 1 group gave up."
    assert r.status == "Waiting" and r.attempts == 4 and gate.log.count(("unreserve", "p")) == 3


def test_a_victim_waiting_at_permit_is_preempted_in_memory_and_backs_off():
    """v1.37 executor.go PreemptPod: a victim waiting at Permit is not deleted; waitingPod.Preempt
    fails its binding cycle with an Error (runtime/framework.go WaitOnPermit), so it is forgotten
    and goes to backoffQ; the preemptor then fits where it waited."""
    gate = Gate(timeout=60)
    s = gate_scheduler(gate)
    lows = [make_pod(f"low{i}", cpu="4", priority=1) for i in range(2)]
    s.add_pods(lows)
    s.run(max_attempts=2)
    assert [s.results[p.uid].status for p in lows] == ["Waiting", "Waiting"]
    vip = make_pod("vip", cpu="4", priority=100)
    s.add_pod(vip)
    s.run(max_attempts=1)
    r = s.results[vip.uid]
    target = r.nominated_node_name
    assert r.message.endswith(f"preemption: found a potential placement for pod on node {target}, preempting 1 victims")
    s.run(until=s.clock.now())
    (victim,) = [p for p in lows if s.results[p.uid].status == "Error"]  # the one waiting on the target
    rv = s.results[victim.uid]
    assert rv.status == "Error" and rv.message == "waiting on permit for pod: preempted"
    assert s.queue.where(victim.uid) == "backoff" and victim.uid in {p.uid for p in s.pods.values()}  # not deleted
    s.run(until=s.clock.now() + 5)
    s.profiles["default-scheduler"].get_waiting_pod(vip.uid).allow("Gate")
    s.run(until=s.clock.now() + 1)
    assert (s.results[vip.uid].status, s.results[vip.uid].node_name) == ("Scheduled", target)


class FailingBinder(BindPlugin):
    def name(self):
        return "FailingBinder"

    def bind(self, state, pod, node_name):
        return Status(Code.ERROR, "etcd is down")


@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_bind_failure_unreserves_forgets_and_requeues(n_pods):
    gate = Gate()
    s = gate_scheduler(gate, extra="""    bind: {enabled: [{name: FailingBinder}], disabled: [{name: DefaultBinder}]}""")
    s.add_pods([make_pod(f"p{i}", cpu="10m") for i in range(n_pods)])
    s.run(max_attempts=n_pods)
    fw = s.profiles["default-scheduler"]
    pods = [s.results[uid].pod for uid in s._order]
    assert [s.results[p.uid].status for p in pods] == ["Waiting"] * n_pods and s.cache.pod_count() == n_pods
    for pod in pods:
        fw.get_waiting_pod(pod.uid).allow("Gate")
    results = s.run(until=s.clock.now())  # runs the binding cycles, stops before the retries
    for r in results:
        assert r.status == "Error" and r.message == 'running Bind plugin "FailingBinder": etcd is down'
        assert ("unreserve", r.pod.name) in gate.log and s.queue.where(r.pod.uid) == "backoff"
    assert s.cache.pod_count() == 0


@pytest.mark.parametrize("pop_from_backoff_q, ends_at", [(True, 300), (False, 365)],
                         ids=["PopFromBackoffQ", "no-PopFromBackoffQ"])
@pytest.mark.parametrize("n_pods", [3, 20])
def test_permit_timeouts_of_many_pods_release_them_all_and_run_ends(n_pods, pop_from_backoff_q, ends_at):
    gate = Gate(timeout=30)
    s = gate_scheduler(gate, feature_gates={"SchedulerPopFromBackoffQ": pop_from_backoff_q})
    s.add_pods([make_pod(f"p{i}", cpu="10m") for i in range(n_pods)])
    results = s.run()
    for r in results:
        assert r.status == "Unschedulable"
        assert r.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gate."
        # a rejected wait is retried as upstream retries it (a wait's outcome is no function of the
        # cluster) permit_wait_retries times in a row; then, the committed cluster never having
        # changed, the pod settles
        assert r.attempts == s.permit_wait_retries == 10
    assert gate.log.count(("reserve", "p0")) == 10 == gate.log.count(("unreserve", "p0"))
    # The rejections at t=30 clear the nominations made at Permit: pod updates Gate answers Queue,
    # so the pods go to backoffQ. With SchedulerPopFromBackoffQ (upstream's activeQueue.unlockedPop
    # pops backoffQ when activeQ is empty) they are retried at once: ten waits of 30 s; without
    # it, after each backoff (1 s doubling to 10 s): 300 + 1+2+4+8+10*5.
    assert s.cache.pod_count() == 0 and s.clock.now() == ends_at


@pytest.mark.parametrize("gates, retried_at", [(None, 0.5), ({"SchedulerPopFromBackoffQ": False}, 2.0)],
                         ids=["PopFromBackoffQ", "no-PopFromBackoffQ"])
def test_a_pod_an_event_moves_to_backoff_q_is_popped_from_there_when_active_q_is_empty(gates, retried_at):
    """SchedulerPopFromBackoffQ (beta, on at v1.37.2): upstream's activeQueue.unlockedPop takes
    podBackoffQ's head when activeQ is empty (backend/queue/active_queue.go), backing off or not.
    Without the gate the pod waits for the backoffQ flush after its backoff: it failed at 0.3, so
    its 1 s backoff ends at 1.3, and the flush (every second from the queue's start) moves it at 2."""
    s = Scheduler(feature_gates=gates)
    s.add_nodes([make_node("n0", cpu="1")])
    s.add_pod(make_pod("big", cpu="2"))
    s.clock.advance_to(0.3)
    (r,) = s.run(until=0.5)
    assert r.status == "Unschedulable" and s.queue.where(r.pod.uid) == "unschedulable"
    s.add_nodes([make_node("n1", cpu="4")])  # NodeAdd while it backs off: to backoffQ
    assert s.queue.where(r.pod.uid) == "backoff"
    (r,) = s.run()
    assert r.status == "Scheduled" and r.node_name == "n1" and r.attempts == 2 and r.bound_at == retried_at


def test_the_deletion_of_a_pod_waiting_at_permit_rejects_it_at_once():
    """handleAssumedPodDeletion (eventhandlers.go): an update starting an assumed pod's deletion
    rejects it at Permit (RejectWaitingPod: "removed"); its binding cycle then fails, runs
    Unreserve and forgets it, instead of holding its node until the Permit timeout."""
    gate = Gate(timeout=30)
    s = gate_scheduler(gate)
    s.add_pod(make_pod("p"))
    (r,) = s.run(until=5)
    assert r.status == "Waiting" and s.cache.pod_count() == 1
    s.update_pod(s.cluster.pods[r.pod.uid].replace(deletion_timestamp=5.0))
    (r,) = s.run(until=6)
    assert r.status == "Unschedulable" and r.message == "0/1 nodes are available: 1 removed."
    assert gate.log.count(("unreserve", "p")) == 1 and s.cache.pod_count() == 0


# -- profiles ---------------------------------------------------------------------------------------
def test_two_profiles_in_one_scheduler():
    cfg = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: no-scoring-scheduler
    plugins:
      preScore: {disabled: [{name: '*'}]}
      score: {disabled: [{name: '*'}]}
""")
    s = Scheduler(cfg)
    s.add_nodes(nodes(3))
    s.add_pods([make_pod("a"), make_pod("b", scheduler_name="no-scoring-scheduler")])
    a, b = s.run()
    assert a.status == b.status == "Scheduled"
    assert not s.profiles["no-scoring-scheduler"].has_score_plugins()


# -- preemption -------------------------------------------------------------------------------------
def test_preemption_evicts_the_lower_priority_pod_and_nominates():
    s = Scheduler()
    s.add_nodes(nodes(2, cpu="2"))
    s.add_pods([make_pod("low-a", cpu="2", priority=1, node_name="node-000"),
                make_pod("low-b", cpu="2", priority=5, node_name="node-001")])
    s.add_pod(make_pod("vip", cpu="2", priority=100))
    (r,) = s.run()
    assert r.status == "Scheduled" and r.node_name == "node-000"
    assert s.metrics.preemption_victims == 1
    assert "low-a" not in {p.name for p in s.pods.values()}


def test_preemption_policy_never():
    s = Scheduler()
    s.add_nodes(nodes(1, cpu="2"))
    s.add_pod(make_pod("low", cpu="2", priority=1, node_name="node-000"))
    s.add_pod(make_pod("vip", cpu="2", priority=100, preemptionPolicy="Never"))
    (r,) = s.run()
    assert r.status == "Unschedulable"
    assert r.message.endswith("preemption: not eligible due to preemptionPolicy=Never.")


# -- invariants on a random run -----------------------------------------------------------------------
def _random_run(seed):
    rng = random.Random(seed)
    ns, running = random_cluster(seed, 150, 200)
    s = Scheduler(seed=seed)
    s.add_nodes(ns)
    s.add_pods(running)
    t = s.snapshot.table
    before = (t.requested.copy(), t.pod_count.copy())
    pending = [random_existing_pod(rng, 10_000 + i, "") for i in range(1000)]
    s.add_pods([p.replace(node_name="") for p in pending])
    return s, s.run(), before


def test_random_run_invariants_and_determinism():
    s, results, (req_before, count_before) = _random_run(7)
    t = s.snapshot.table
    n_res = req_before.shape[1]
    grew = t.requested[:, :n_res] > req_before
    # wherever the scheduler added requests, the node stays within its allocatable
    assert np.all(t.requested[:, :n_res][grew] <= t.alloc[:, :n_res][grew])
    grew_pods = t.pod_count > count_before
    assert np.all(t.pod_count[grew_pods] <= t.allowed_pods[grew_pods])
    assert grew.any() and grew_pods.any()
    # no pod lost: every pod ends bound, or pending with a reason
    assert len(results) == 1000
    for r in results:
        assert r.status in ("Scheduled", "Unschedulable", "Error")
        assert r.message
        assert (r.node_name is not None) == r.scheduled
    assert sum(r.scheduled for r in results) > 100
    assert sum(not r.scheduled for r in results) > 10
    _, results2, _ = _random_run(7)
    assert [(r.pod.name, r.node_name, r.status, r.message) for r in results] == \
           [(r.pod.name, r.node_name, r.status, r.message) for r in results2]


def test_a_pre_filter_result_narrows_the_nodes_filtered():
    """NodeAffinity's PreFilterResult (matchFields metadata.name): only the named node is filtered,
    an unknown name leaves none; the others are 'didn't satisfy plugin(s) [NodeAffinity]'."""
    def named(name, node, cpu="1"):
        pod = make_pod(name, cpu=cpu, memory="1Gi").manifest
        pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        return pod
    s = Scheduler(seed=0)
    s.add_nodes(nodes(6))
    s.add([named("a", "node-004"), named("b", "node-004", cpu="4"), named("c", "node-404")])
    by_pod = {r.pod.name: r for r in s.run()}
    assert by_pod["a"].node_name == "node-004"
    assert not by_pod["b"].scheduled and not by_pod["c"].scheduled
    assert "1 Insufficient cpu, 5 node(s) didn't satisfy plugin(s) [NodeAffinity]" in by_pod["b"].message
    assert "6 node(s) didn't satisfy plugin(s) [NodeAffinity]" in by_pod["c"].message
