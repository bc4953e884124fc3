"""run() always ends and loses no pod: binding failures, Permit waits and Errors are retried as
upstream retries them, and settle when they fail the same way on an unchanged cluster."""
import pytest

from fastsched import Scheduler
from fastsched.config import ConfigError
from fastsched.clock import RealClock
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.scheduler.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import config_enabling, make_node, make_pod


class _Misbehaving:
    """A plugin at one extension point that answers with ``answer`` (an exception is raised),
    ``times`` times (then it answers Success)."""

    def __init__(self, point: str, answer, *, times: int | None = None):
        self.point, self.answer, self.times, self.calls = point, answer, times, 0

    def name(self):
        return "Misbehaving"

    def _call(self, *args):
        self.calls += 1
        if self.times is not None and self.calls > self.times:
            return (None, 0) if self.point == "permit" else None
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def Misbehaving(point: str, answer, *, times: int | None = None) -> _Misbehaving:  # noqa: N802
    """A plugin class with just the ``point`` method (plugin kinds are found by their methods)."""
    cls = type(f"Misbehaving_{point}", (_Misbehaving,), {point: _Misbehaving._call})
    return cls(point, answer, times=times)


def scheduler_with(plugin, point: str, *, disabled=(), feature_gates=None, nodes: int = 3, cpu: str = "4",
                   **kwargs) -> Scheduler:
    """A Scheduler of ``nodes`` nodes (``cpu`` each) whose profile enables ``plugin`` (under its
    name) at ``point`` (the YAML field), with ``disabled`` disabled there."""
    name = plugin.name()
    config = config_enabling(name, point, disabled=disabled, feature_gates=feature_gates)
    s = Scheduler(config, registry=Registry({name: lambda args, handle: plugin}), feature_gates=feature_gates,
                  **kwargs)
    s.add_nodes([make_node(f"n{i}", cpu=cpu) for i in range(nodes)])
    return s


PRE_BIND, PERMIT, FILTER = "preBind", "permit", "filter"


def add_gangs(s: Scheduler, n_groups: int) -> None:
    """``n_groups`` PodGroups g<i> (gang, minCount 2) of three pods g<i>-<m> asking 1 cpu each."""
    for g in range(n_groups):
        s.add([{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": f"g{g}", "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}])
        s.add_pods([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"g{g}-{m}", "namespace": "default"},
                     "spec": {"schedulingGroup": {"podGroupName": f"g{g}"},
                              "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
                    for m in range(3)])


@pytest.mark.parametrize("n_pods", [1, 3, 20])
@pytest.mark.parametrize("answer", [RuntimeError("disk on fire"), Status(Code.ERROR, "etcd is down")],
                         ids=["raises", "returns-error"])
def test_a_failing_pre_bind_plugin_does_not_make_run_spin(answer, n_pods):
    plugin = Misbehaving("pre_bind", answer)
    s = scheduler_with(plugin, PRE_BIND)
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
    results = s.run()
    assert len(results) == n_pods
    for r in results:
        assert r.status == ERROR and "Misbehaving" in r.message
        assert r.attempts == 2  # retried once after backoff, then settled
    assert plugin.calls == 2 * n_pods
    assert s.cache.pod_count() == 0                 # every assumed pod was forgotten
    assert s.clock.now() < 5


def test_a_failing_pre_bind_plugin_is_retried_after_backoff_while_time_runs():
    plugin = Misbehaving("pre_bind", Status(Code.ERROR, "etcd is down"))
    s = scheduler_with(plugin, PRE_BIND)
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run(until=600)
    # backoff doubles from 1 s to podMaxBackoff (10 s): upstream retries about every 10 s
    assert 55 <= r.attempts <= 65 and r.status == ERROR
    assert s.clock.now() == 600


@pytest.mark.parametrize("n_pods", [1, 3, 20])
@pytest.mark.parametrize("answer", [RuntimeError("boom"), Status(Code.SKIP)], ids=["raises", "skips"])
def test_a_bind_plugin_that_raises_or_skips_ends(answer, n_pods):
    plugin = Misbehaving("bind", answer)
    s = scheduler_with(plugin, "bind", disabled=("DefaultBinder",))
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
    results = s.run()
    expected = "Misbehaving" if isinstance(answer, RuntimeError) else "every Bind plugin returned Skip"
    assert [r.status for r in results] == [ERROR] * n_pods
    assert all(expected in r.message and r.attempts == 2 for r in results)
    assert plugin.calls == 2 * n_pods and s.cache.pod_count() == 0


def test_a_transient_error_is_retried_after_backoff_without_any_cluster_change():
    plugin = Misbehaving("filter", Status(Code.ERROR, "temporarily unavailable"), times=1)
    s = scheduler_with(plugin, FILTER)
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    assert r.status == SCHEDULED and r.attempts == 2
    assert 1 <= s.clock.now() <= 2  # after the initial 1 s backoff


@pytest.mark.parametrize("pop_from_backoff_q", [True, False], ids=["PopFromBackoffQ", "no-PopFromBackoffQ"])
@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_a_permit_wait_that_keeps_timing_out_is_retried_then_settles(n_pods, pop_from_backoff_q):
    plugin = Misbehaving("permit", (Status(Code.WAIT), 10.0))
    s = scheduler_with(plugin, PERMIT, feature_gates={"SchedulerPopFromBackoffQ": pop_from_backoff_q})
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
    results = s.run()
    for r in results:
        assert r.status == UNSCHEDULABLE
        # a Permit rejection concerns the one node the pod was assumed on
        assert r.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Misbehaving."
    assert s.cache.pod_count() == 0
    # A wait's outcome is not a function of the cluster: upstream retries the pod forever, run()
    # permit_wait_retries (10) times in a row, then the cluster rule settles it (it failed twice
    # on one unchanged committed cluster). The rejection clears the nomination made at Permit
    # (NominatedNodeNameForExpectation): a pod update, which Misbehaving (no EnqueueExtensions:
    # every event) answers Queue, so the pod goes to backoffQ, still backing off (upstream
    # eventhandlers.go updatePodInSchedulingQueue -> PriorityQueue.Update ->
    # requeueEntityWithQueueingStrategy).
    assert s.permit_wait_retries == 10
    assert [r.attempts for r in results] == [10] * n_pods and plugin.calls == 10 * n_pods
    if pop_from_backoff_q:
        # activeQ is empty: upstream's activeQueue.unlockedPop takes backoffQ's head at once, so
        # every pod is retried the instant its wait ended: ten waits of 10 s
        assert s.clock.now() == 100.0
    else:
        # each retry waits for its backoff, 1 s doubling to podMaxBackoff (10 s): 1+2+4+8+10*5
        assert s.clock.now() == 100.0 + 65.0


def test_a_permit_wait_is_retried_by_the_unschedulable_timeout_while_time_runs():
    plugin = Misbehaving("permit", (Status(Code.WAIT), 10.0))
    times = []
    permit = plugin.permit
    plugin.permit = lambda *args: (times.append(s.clock.now()), permit(*args))[1]
    # without NominatedNodeNameForExpectation no nomination updates the pod between attempts
    s = scheduler_with(plugin, PERMIT, feature_gates={"NominatedNodeNameForExpectation": False})
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run(until=1000)
    # The first failure writes the PodScheduled=False condition (handleSchedulingFailure's
    # updatePod); that pod update, heard back, goes through Misbehaving's hint (no
    # EnqueueExtensions: every event, Queue), so the pod is retried at once (activeQ empty: popped
    # from backoffQ) at t=10. Its second failure writes the same condition: no patch, no event;
    # then each attempt waits 10 s and sits in unschedulablePods until the 5-minute timeout's next
    # 30 s flush: attempts at t=0, 10, 330, 660, 990.
    assert times == [0.0, 10.0, 330.0, 660.0, 990.0]
    assert r.attempts == 5 and plugin.calls == 5
    assert r.nominated_node_name is None and not s.cluster.pods[r.pod.uid].nominated_node_name
    (condition,) = [c for c in s.cluster.pods[r.pod.uid].conditions if c["type"] == "PodScheduled"]
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"] == r.message


def test_a_pod_waiting_at_permit_is_nominated_to_its_node_and_the_clearing_requeues_it():
    """NominatedNodeNameForExpectation (beta, on): the binding cycle nominates a pod that waits at
    Permit to its node through the API (upstream bindingCycle); its rejection clears the nomination
    (handleSchedulingFailure's ModeOverride ""), and that pod update requeues it (a plugin without
    EnqueueExtensions is interested in every event): attempts come every wait plus backoff, not
    every unschedulable timeout."""
    plugin = Misbehaving("permit", (Status(Code.WAIT), 10.0))
    s = scheduler_with(plugin, PERMIT)
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run(until=5)
    assert r.status == "Waiting" and r.nominated_node_name == r.node_name
    assert s.cluster.pods[r.pod.uid].nominated_node_name == r.node_name
    (r,) = s.run(until=1000)
    assert r.attempts > 20 and plugin.calls == r.attempts
    if r.status != "Waiting":
        assert not s.cluster.pods[r.pod.uid].nominated_node_name


def test_pods_that_do_not_fit_settle_and_those_that_fit_are_scheduled():
    s = Scheduler(seed=1)
    s.add_nodes([make_node("n0", cpu="2")])
    s.add_pods([make_pod("big", cpu="8"), make_pod("small", cpu="1")])
    results = {r.pod.name: r for r in s.run()}
    # "small" was bound after "big" failed: a change, so "big" is retried once by the
    # unschedulable pods' 5-minute timeout, fails the same way, and settles
    assert results["big"].status == UNSCHEDULABLE and results["big"].attempts == 2
    assert results["small"].status == SCHEDULED and s.clock.now() == 330
    s.add_nodes([make_node("n1", cpu="8")])  # a change that helps: the pod is retried
    results = {r.pod.name: r for r in s.run()}
    assert results["big"].status == SCHEDULED and results["big"].node_name == "n1"


def test_a_real_clock_runs_the_same_loop():
    plugin = Misbehaving("permit", (Status(Code.WAIT), 0.05))
    s = scheduler_with(plugin, PERMIT, clock=RealClock())
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    assert r.status == UNSCHEDULABLE and "rejected due to timeout after waiting 50ms" in r.message


# -- explain agrees with run() ---------------------------------------------------------------------
def test_explain_of_a_bound_pod_does_not_count_it_against_itself():
    s = Scheduler(seed=2)
    s.add_nodes([make_node("n0", cpu="2"), make_node("n1", cpu="1")])
    s.add_pod(make_pod("p", cpu="2"))
    (r,) = s.run()
    assert r.node_name == "n0"
    e = s.explain(r.pod)
    assert e.filter["n0"]["NodeResourcesFit"] is None          # its own 2 cpus are not counted
    assert e.feasible == ["n0"] and e.best_nodes == ["n0"]
    again = s.explain(r.pod)
    assert again.filter["n0"] == e.filter["n0"]                  # the cluster was restored
    assert s.cache.get_pod(r.pod) is not None


def test_explain_with_an_unknown_profile_is_a_clear_error():
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    with pytest.raises(ConfigError, match=r"no profile named 'nope' in the configuration \(profiles: 'default-scheduler'\)"):
        s.explain(make_pod("p"), profile="nope")


def test_a_pre_enqueue_rejection_names_the_plugin_and_its_reason():
    plugin = Misbehaving("pre_enqueue", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "quota exhausted"))
    s = scheduler_with(plugin, "preEnqueue")
    s.add_pod(make_pod("p", cpu="1"))
    (r,) = s.run()
    assert r.status == "Gated" and r.message == 'rejected by PreEnqueue plugin "Misbehaving": quota exhausted'


class _RejectsMember1:
    """Answers ``answer`` at its extension point for pods named ``*-1`` (one member of each gang)."""

    def __init__(self, answer):
        self.answer, self.calls = answer, 0

    def name(self):
        return "RejectsMember1"

    def _call(self, state, pod, node_name):
        self.calls += 1
        if not pod.name.endswith("-1"):
            return None
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def _rejects_member1(point: str, answer):
    def permit(self, state, pod, node_name):
        status = self._call(state, pod, node_name)
        return status, 0.0
    methods = {point: permit if point == "permit" else _RejectsMember1._call}
    if point == "reserve":
        methods["unreserve"] = lambda self, state, pod, node_name: None
    return type(f"RejectsMember1_{point}", (_RejectsMember1,), methods)(answer)


@pytest.mark.parametrize("n_groups", [1, 3])
@pytest.mark.parametrize("point, answer", [
    ("permit", Status(Code.UNSCHEDULABLE, "quota exceeded")),
    ("permit", Status(Code.ERROR, "admission webhook down")),
    ("reserve", Status(Code.UNSCHEDULABLE, "no license left")),
    ("pre_bind", RuntimeError("volume attach failed")),
], ids=["permit-unschedulable", "permit-error", "reserve-unschedulable", "pre-bind-raises"])
def test_a_gang_member_rejected_after_a_successful_group_cycle_does_not_stop_time(point, answer, n_groups):
    """Upstream requeues a group whose cycle succeeded without backoff (AddAttemptedPodGroupIfNeeded),
    so a member that a Permit, Reserve or PreBind plugin keeps rejecting is retried at once, again
    and again; on the virtual clock that loop took no time and run(until=...) never returned. Now
    it ends at ``until``, every pod has its result and nothing stays assumed."""
    plugin = _rejects_member1(point, answer)
    key = {"permit": "permit", "reserve": "reserve", "pre_bind": "preBind"}[point]
    s = scheduler_with(plugin, key, feature_gates={"GenericWorkload": True})
    add_gangs(s, n_groups)
    results = s.run(until=600, max_attempts=5000)  # (the loop, were it back, ends here short of 600)
    assert s.clock.now() == 600
    assert len(results) == 3 * n_groups
    rejected = [r for r in results if r.pod.name.endswith("-1")]
    assert all(r.status in (UNSCHEDULABLE, ERROR) for r in rejected), [(r.status, r.message) for r in rejected]
    assert all(r.attempts < 100 for r in results), [r.attempts for r in results]
    assert all(r.status == SCHEDULED for r in results if not r.pod.name.endswith("-1"))
    assert not any(s.cache.is_assumed_pod(r.pod) for r in results)


# -- a binding cycle that writes objects, fails, and writes them back --------------------------------
GPU_DRIVER = "gpu.example.com"


def _claim_objects(n_devices: int) -> list[dict]:
    """A DeviceClass, a slice of ``n_devices`` GPUs on n0, and claim ``full``, allocated the last
    GPU and already reserved for 256 consumers: a pod that shares it passes Filter, then its
    PreBind's reservation is refused by the API server (``status.reservedFor: Too many``), after
    the PreBind wrote the pod's own claim (allocated and reserved), which Unreserve writes back."""
    selector = f'device.driver == "{GPU_DRIVER}"'
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": selector}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n0-gpus"},
         "spec": {"driver": GPU_DRIVER, "nodeName": "n0",
                  "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": f"gpu-{i}"} for i in range(n_devices)]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "full", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"allocation": {"devices": {"results": [{"request": "r", "driver": GPU_DRIVER, "pool": "n0",
                                                             "device": f"gpu-{n_devices - 1}"}]},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                       {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": f"x{i}", "uid": f"uid-x{i}"} for i in range(256)]}},
    ]


def _claim_pod(name: str, group: str | None = None) -> list[dict]:
    """Pod ``name`` with its own claim ``<name>-own`` (created with it) and the shared ``full``."""
    spec: dict = {"containers": [{"name": "c", "image": "x",
                                  "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "own"}, {"name": "full"}]}}],
                  "resourceClaims": [{"name": "own", "resourceClaimName": f"{name}-own"},
                                     {"name": "full", "resourceClaimName": "full"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": f"{name}-own", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}]


def _claims_as_written(s: Scheduler) -> dict[str, object]:
    return {c.name: c.manifest.get("status") for c in s.list_objects("ResourceClaim")}


@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_a_binding_failure_after_its_own_claim_writes_settles(n_pods):
    """Each attempt commits writes (PreBind allocates and reserves the pod's own claim, Unreserve
    takes the reservation back), so the committed change count grew on every attempt and run()
    never returned (found by mutating a gangs-claims scenario). The writes leave the claims as
    they were: the pods now settle as for any persistent binding error."""
    s = Scheduler(seed=1)
    s.add_nodes([make_node("n0", cpu="16")])
    s.add(_claim_objects(n_pods + 1))
    for i in range(n_pods):
        s.add(_claim_pod(f"p{i}"))
    results = s.run(max_attempts=50 * n_pods)  # (were it back, the loop would stop here, unsettled)
    assert len(results) == n_pods
    for r in results:
        assert r.status == ERROR and "status.reservedFor: Too many: 257" in r.message, r.message
        assert 2 <= r.attempts <= 4, r.attempts
    assert s.cache.pod_count() == 0 and not s._may_progress()
    after = _claims_as_written(s)
    assert len(after["full"]["reservedFor"]) == 256
    # run(until=...) retries them after backoff, as upstream, and ends at until
    (r0, *_) = s.run(until=300, max_attempts=5000)
    assert s.clock.now() == 300 and r0.attempts > 10 and r0.status == ERROR
    assert _claims_as_written(s) == after


def test_a_gang_whose_member_binding_fails_after_its_claim_writes_settles():
    """The same for a PodGroup: the group's cycle succeeds, the member's PreBind writes its own
    claim and fails on the shared one, and the group is requeued without backoff; run() and
    run(until=...) both ended only because of the same-instant rule, which the writes defeated."""
    s = Scheduler(seed=1, feature_gates={"GenericWorkload": True})
    s.add_nodes([make_node("n0", cpu="16")])
    s.add(_claim_objects(4))
    s.add([{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}])
    for i in range(2):
        s.add(_claim_pod(f"g-{i}", group="g"))
    results = s.run(max_attempts=500)
    assert [r.status for r in results] == [ERROR, ERROR], [r.message for r in results]
    assert all(r.attempts <= 4 for r in results), [r.attempts for r in results]
    assert not s._may_progress()
    results = s.run(until=120, max_attempts=5000)
    assert s.clock.now() == 120 and all(r.attempts < 100 for r in results), [r.attempts for r in results]


def test_net_unchanged_reads_the_journal():
    """Writes that end where they began are no change; anything else is, and so is a change the
    journal does not hold (a bind, a node) or no longer holds."""
    from fastsched.api import KubeObject
    from fastsched.scheduler.eventhandlers import net_unchanged

    def obj(status: str, manifest: bool = True) -> KubeObject:
        return KubeObject(name="c", namespace="default",
                          manifest={"metadata": {"name": "c"}, "status": status} if manifest else {})

    a, b, a2 = obj("a"), obj("b"), obj("a")
    journal = [(3, "ResourceClaim", a, b), (4, "ResourceClaim", b, a2)]
    assert net_unchanged(journal, 2, 4)                 # a -> b -> a (an equal copy)
    assert not net_unchanged(journal, 2, 3)             # a -> b
    assert not net_unchanged(journal, 3, 5)             # change 5 is not in the journal (a bind)
    assert not net_unchanged(journal, 1, 4)             # nor is change 2
    assert not net_unchanged([(3, "ResourceClaim", None, a), (4, "ResourceClaim", a, b)], 2, 4)  # created
    assert net_unchanged([(3, "ResourceClaim", None, a), (4, "ResourceClaim", a, None)], 2, 4)  # created, deleted
    built_a, built_b = obj("a", manifest=False), obj("a", manifest=False)  # objects built in code
    assert not net_unchanged([(3, "ResourceClaim", built_a, b), (4, "ResourceClaim", b, built_b)], 2, 4)
    assert net_unchanged([(3, "ResourceClaim", built_a, b), (4, "ResourceClaim", b, built_a)], 2, 4)
    assert not net_unchanged([], 2, 4)
    changed = KubeObject(name="c", namespace="default", labels={"x": "y"}, manifest=a.manifest)  # replace()d
    assert not net_unchanged([(3, "ResourceClaim", a, b), (4, "ResourceClaim", b, changed)], 2, 4)
