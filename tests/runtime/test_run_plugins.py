"""The run_* methods: success, failure and skip paths with upstream's messages."""
import pytest

from fastsched.clock import RealClock, VirtualClock
from fastsched.framework import (Code, CycleState, NodeInfo, NodeToStatus, PodInfo,
                                 PodNominator, PostFilterResult, PreFilterResult, Status)
from fastsched.framework.listers import NodeInfoSnapshot
from fastsched.framework.types import NominatingInfo, NominatingMode
from fastsched.runtime import new_framework

from .fakes import Calls, Injected, TestPlugin, registry_of, unschedulable
from .test_new_framework import profile, pset


def build(points, injected=None, calls=None, **kw):
    """A framework whose TestPlugins are configured per name; ``points`` maps point -> names."""
    calls = calls if calls is not None else Calls()
    injected = injected or {}
    names = sorted({n if isinstance(n, str) else n[0] for v in points.values() for n in v})
    plugins = [TestPlugin(n, injected.get(n, Injected()), calls) for n in names]
    prof = profile(**{p: pset(*v) for p, v in points.items()})
    return new_framework(registry_of(*plugins), prof, **kw), calls


@pytest.fixture
def pod(make_pod):
    return make_pod("p", priority=10)


@pytest.fixture
def nodes(make_node):
    return [NodeInfo(make_node(f"n{i}")) for i in range(3)]


# -- PreFilter --------------------------------------------------------------------------------------------
def test_pre_filter_success_and_skip(pod, nodes):
    fw, calls = build({"pre_filter": ["A", "B"], "filter": ["A", "B"]},
                      {"A": Injected(pre_filter_status=Status(Code.SKIP))})
    state = CycleState()
    res, st, with_nodes = fw.run_pre_filter_plugins(state, pod, nodes)
    assert res is None and st is None and with_nodes == set()
    assert state.skip_filter_plugins == {"A"}
    calls.clear()
    assert fw.run_filter_plugins(state, pod, nodes[0]) is None
    assert calls == [("B", "filter")]  # A's Filter is skipped this cycle


def test_pre_filter_unresolvable_stops_at_once(pod, nodes):
    fw, calls = build({"pre_filter": ["A", "B"]},
                      {"A": Injected(pre_filter_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "nope"))})
    res, st, with_nodes = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.plugin() == "A" and st.message() == "nope"
    assert calls == [("A", "pre_filter")]


def test_pre_filter_unschedulable_runs_the_rest_and_last_one_wins(pod, nodes):
    fw, calls = build({"pre_filter": ["A", "B", "C"]},
                      {"A": Injected(pre_filter_status=unschedulable("a")),
                       "B": Injected(pre_filter_status=unschedulable("b"))})
    _, st, _ = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert [c[0] for c in calls] == ["A", "B", "C"]
    assert st.plugin() == "B" and st.message() == "b" and st.code() == Code.UNSCHEDULABLE


def test_pre_filter_error_is_wrapped(pod, nodes):
    fw, _ = build({"pre_filter": ["A"]}, {"A": Injected(pre_filter_status=Status(Code.ERROR, "broken"))})
    _, st, _ = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert st.code() == Code.ERROR
    assert st.message() == 'running PreFilter plugin "A": broken'
    assert st.plugin() == "A"


def test_pre_filter_exception_becomes_error(pod, nodes):
    fw, _ = build({"pre_filter": ["A"]}, {"A": Injected(raise_in={"pre_filter"})})
    _, st, _ = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert st.code() == Code.ERROR
    assert st.message() == 'running PreFilter plugin "A": RuntimeError: A.pre_filter exploded'


def test_pre_filter_results_intersect(pod, nodes):
    fw, _ = build({"pre_filter": ["A", "B", "C"]},
                  {"A": Injected(pre_filter_result=PreFilterResult({"n0", "n1"})),
                   "B": Injected(pre_filter_result=PreFilterResult({"n1", "n2"}))})
    res, st, with_nodes = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert st is None and res.node_names == {"n1"} and with_nodes == {"A", "B"}


@pytest.mark.parametrize("sets,msg", [
    ([{"n0"}, {"n1"}], "node(s) didn't satisfy plugin(s) [A B] simultaneously"),
    ([set(), None], "node(s) didn't satisfy plugin A"),
])
def test_pre_filter_empty_intersection(pod, nodes, sets, msg):
    inj = {n: Injected(pre_filter_result=None if s is None else PreFilterResult(s)) for n, s in zip("AB", sets)}
    fw, calls = build({"pre_filter": ["A", "B"]}, inj)
    res, st, _ = fw.run_pre_filter_plugins(CycleState(), pod, nodes)
    assert st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == msg
    assert res is not None and res.node_names == frozenset()


def test_pre_filter_lists_nodes_from_the_snapshot(pod, nodes):
    seen = []

    class Recording(TestPlugin):
        def pre_filter(self, state, pod, nodes):
            seen.append([n.name for n in nodes])
            return None, None

    from fastsched.runtime import Registry
    from .fakes import QueueSortAndBind
    r = Registry({"R": lambda a, h: Recording("R"), "QSB": lambda a, h: QueueSortAndBind()})
    fw = new_framework(r, profile(pre_filter=pset("R")), snapshot_shared_lister=NodeInfoSnapshot(nodes))
    fw.run_pre_filter_plugins(CycleState(), pod)
    assert seen == [["n0", "n1", "n2"]]


def test_pre_filter_extensions_skip_skipped_plugins_and_wrap_errors(pod, nodes, make_pod):
    fw, calls = build({"pre_filter": ["A", "B"]},
                      {"A": Injected(pre_filter_status=Status(Code.SKIP)),
                       "B": Injected(add_pod_status=Status(Code.ERROR, "cannot add"))})
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, nodes)
    calls.clear()
    st = fw.run_pre_filter_extension_add_pod(state, pod, PodInfo(make_pod("q")), nodes[0])
    assert calls == [("B", "add_pod")]
    assert st.message() == 'running AddPod on PreFilter plugin "B": cannot add'
    assert fw.run_pre_filter_extension_remove_pod(state, pod, PodInfo(make_pod("q")), nodes[0]) is None


# -- Filter ------------------------------------------------------------------------------------------------
def test_filter_first_failure_wins(pod, nodes):
    fw, calls = build({"filter": ["A", "B", "C"]},
                      {"B": Injected(filter_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b1", "b2")),
                       "C": Injected(filter_status=unschedulable("c"))})
    st = fw.run_filter_plugins(CycleState(), pod, nodes[0])
    assert st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons() == ["b1", "b2"]
    assert st.plugin() == "B"
    assert [c[0] for c in calls] == ["A", "B"]


@pytest.mark.parametrize("code", [Code.ERROR, Code.WAIT, Code.SKIP])
def test_filter_non_rejection_becomes_error(pod, nodes, code):
    fw, _ = build({"filter": ["A"]}, {"A": Injected(filter_status=Status(code, "odd"))})
    st = fw.run_filter_plugins(CycleState(), pod, nodes[0])
    assert st.code() == Code.ERROR and st.plugin() == "A"
    assert st.message().startswith('running "A" filter plugin: ')


def test_filter_pending_is_a_rejection(pod, nodes):
    fw, _ = build({"filter": ["A"]}, {"A": Injected(filter_status=Status(Code.PENDING, "later"))})
    st = fw.run_filter_plugins(CycleState(), pod, nodes[0])
    assert st.code() == Code.PENDING and st.message() == "later"


class Nominator(PodNominator):
    def __init__(self, by_node):
        self.by_node = by_node

    def add_nominated_pod(self, pod_info, nominating_info):
        pass

    def delete_nominated_pod_if_exists(self, pod):
        pass

    def update_nominated_pod(self, old_pod, new_pod_info):
        pass

    def nominated_pods_for_node(self, node_name):
        return self.by_node.get(node_name, [])


class MaxPodsFilter(TestPlugin):
    """Fails nodes that (with the pods added for this pass) hold more than ``limit`` pods."""

    limit = 0

    def filter(self, state, pod, node_info):
        self.calls.append((len(node_info.pods), "filter"))
        return unschedulable("too many") if len(node_info.pods) > self.limit else None


def _nominated_fw(nominated):
    from fastsched.runtime import Registry
    from .fakes import QueueSortAndBind
    calls = Calls()
    f = MaxPodsFilter("M", calls=calls)
    r = Registry({"M": lambda a, h: f, "QSB": lambda a, h: QueueSortAndBind()})
    return new_framework(r, profile(pre_filter=pset("M"), filter=pset("M")),
                         pod_nominator=Nominator({"n0": nominated})), calls


def test_filter_with_nominated_pods_runs_two_passes(pod, nodes, make_pod):
    higher = PodInfo(make_pod("high", priority=100))
    lower = PodInfo(make_pod("low", priority=1))
    same_uid = PodInfo(make_pod("p", priority=100))  # the pod itself is never added
    fw, calls = _nominated_fw([higher, lower, same_uid])
    MaxPodsFilter.limit = 1
    st = fw.run_filter_plugins_with_nominated_pods(CycleState(), pod, nodes[0])
    assert st is None
    # pass 1 sees only the higher-priority nominated pod; pass 2 the bare node
    assert [c[0] for c in calls if c[1] == "filter"] == [1, 0]
    assert nodes[0].pods == []  # the caller's NodeInfo is untouched


def test_filter_with_nominated_pods_stops_after_failing_pass_one(pod, nodes, make_pod):
    fw, calls = _nominated_fw([PodInfo(make_pod("high", priority=100))])
    MaxPodsFilter.limit = 0
    st = fw.run_filter_plugins_with_nominated_pods(CycleState(), pod, nodes[0])
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "M"
    assert [c[0] for c in calls if c[1] == "filter"] == [1]


def test_filter_with_no_nominated_pods_runs_once(pod, nodes):
    fw, calls = _nominated_fw([])
    MaxPodsFilter.limit = 5
    assert fw.run_filter_plugins_with_nominated_pods(CycleState(), pod, nodes[0]) is None
    assert [c for c in calls if c[1] == "filter"] == [(0, "filter")]


def test_filter_with_only_uncounted_nominated_pods_reads_the_node_on_a_state_clone(pod, nodes, make_pod):
    """Nominated pods that all fail addGENominatedPods' check (lower priority, the pod itself): one
    pass, whose answer is the node's own; upstream runs it on clones, so a Filter's CycleState write
    is dropped (the NodeInfo is not copied: nothing was added and Filter only reads it)."""
    seen = []

    class Writing(MaxPodsFilter):
        def filter(self, state, pod, node_info):
            seen.append((node_info, len(node_info.pods)))
            state.write("written-by-filter", True)
            return super().filter(state, pod, node_info)

    from fastsched.runtime import Registry
    from .fakes import QueueSortAndBind
    f = Writing("M", calls=Calls())
    r = Registry({"M": lambda a, h: f, "QSB": lambda a, h: QueueSortAndBind()})
    fw = new_framework(r, profile(pre_filter=pset("M"), filter=pset("M")), pod_nominator=Nominator(
        {"n0": [PodInfo(make_pod("low", priority=1)), PodInfo(make_pod("p", priority=100))]}))
    MaxPodsFilter.limit = 0
    state = CycleState()
    assert fw.run_filter_plugins_with_nominated_pods(state, pod, nodes[0]) is None
    assert seen == [(nodes[0], 0)]
    assert "written-by-filter" not in state
    added, state_out, node_out = fw._add_ge_nominated_pods(pod, state, nodes[0])
    assert (added, node_out) == (False, nodes[0]) and state_out is not state


# -- PostFilter --------------------------------------------------------------------------------------------
def test_post_filter_aggregates_rejections():
    res = PostFilterResult(NominatingInfo("n1", NominatingMode.OVERRIDE))
    fw, calls = build({"post_filter": ["A", "B"]},
                      {"A": Injected(post_filter_status=unschedulable("a"), post_filter_result=res),
                       "B": Injected(post_filter_status=unschedulable("b"),
                                     post_filter_result=PostFilterResult(NominatingInfo("", NominatingMode.NOOP)))})
    r, st = fw.run_post_filter_plugins(CycleState(), None, NodeToStatus())
    assert r is res  # the Noop result of B does not replace A's
    assert st.code() == Code.UNSCHEDULABLE and st.reasons() == ["a", "b"] and st.plugin() == "A"


@pytest.mark.parametrize("first,stops,code", [
    (None, True, Code.SUCCESS),
    (Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"), True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    (Status(Code.ERROR, "x"), True, Code.ERROR),
])
def test_post_filter_stops(first, stops, code):
    fw, calls = build({"post_filter": ["A", "B"]}, {"A": Injected(post_filter_status=first)})
    r, st = fw.run_post_filter_plugins(CycleState(), None, NodeToStatus())
    assert calls == [("A", "post_filter")]
    assert (st.code() if st is not None else Code.SUCCESS) == code
    if code != Code.SUCCESS:
        assert st.plugin() == "A"


# -- PreScore / Score ----------------------------------------------------------------------------------------
def test_pre_score_skip_and_error(pod, nodes):
    fw, calls = build({"pre_score": ["A", "B"], "score": ["A", "B"]},
                      {"A": Injected(pre_score_status=Status(Code.SKIP), score=7), "B": Injected(score=9)})
    state = CycleState()
    assert fw.run_pre_score_plugins(state, pod, nodes) is None
    assert state.skip_score_plugins == {"A"}
    out, st = fw.run_score_plugins(state, pod, nodes)
    assert st is None
    assert [[(s.name, s.score) for s in n.scores] for n in out] == [[("B", 9)]] * 3
    fw, _ = build({"pre_score": ["A"]}, {"A": Injected(pre_score_status=unschedulable("no"))})
    st = fw.run_pre_score_plugins(CycleState(), pod, nodes)
    assert st.code() == Code.ERROR and st.message() == 'running PreScore plugin "A": no'


def test_score_weights_normalize_and_totals(pod, nodes):
    def halve(scores):
        for s in scores:
            s.score //= 2

    score_by_node = lambda ni: {"n0": 10, "n1": 40, "n2": 100}[ni.name]  # noqa: E731
    fw, _ = build({"score": [("A", 3), ("B", 1)]},
                  {"A": Injected(score=score_by_node, normalize=halve), "B": Injected(score=5)})
    m, st = fw.run_score_plugins_matrix(CycleState(), pod, nodes)
    assert st is None
    assert m.plugin_names == ["A", "B"] and m.node_names == ["n0", "n1", "n2"]
    assert m.raw.tolist() == [[10, 40, 100], [5, 5, 5]]
    assert m.normalized.tolist() == [[5, 20, 50], [5, 5, 5]]
    assert m.weighted.tolist() == [[15, 60, 150], [5, 5, 5]]
    assert m.totals.tolist() == [20, 65, 155]
    out, _ = fw.run_score_plugins(CycleState(), pod, nodes)
    assert [(n.name, n.total_score) for n in out] == [("n0", 20), ("n1", 65), ("n2", 155)]
    assert [(s.name, s.score) for s in out[1].scores] == [("A", 60), ("B", 5)]


def test_score_failure_messages(pod, nodes):
    fw, _ = build({"score": ["A"]}, {"A": Injected(score_status=Status(Code.ERROR, "boom"))})
    out, st = fw.run_score_plugins(CycleState(), pod, nodes)
    assert out is None and st.code() == Code.ERROR
    assert st.message() == 'running Score plugins: plugin "A" failed with: boom'

    fw, _ = build({"score": ["A"]}, {"A": Injected(normalize_status=Status(Code.ERROR, "norm"))})
    out, st = fw.run_score_plugins(CycleState(), pod, nodes)
    assert st.message() == 'running Normalize on Score plugins: plugin "A" failed with: norm'

    fw, _ = build({"score": ["A", "B"]}, {"A": Injected(score=50), "B": Injected(score=101)})
    out, st = fw.run_score_plugins(CycleState(), pod, nodes)
    assert st.message() == ('applying score defaultWeights on Score plugins: plugin "B" returns an invalid '
                            'score 101, it should in the range of [0, 100] after normalizing')

    fw, _ = build({"score": ["A"]}, {"A": Injected(score=-1)})
    out, st = fw.run_score_plugins(CycleState(), pod, nodes)
    assert "returns an invalid score -1" in st.message()


def test_score_with_no_nodes_or_plugins(pod):
    fw, _ = build({"score": ["A"]}, {"A": Injected(score=5)})
    out, st = fw.run_score_plugins(CycleState(), pod, [])
    assert out == [] and st is None


# -- Reserve / Permit ----------------------------------------------------------------------------------------
def test_reserve_rejection_error_and_unreserve_order(pod):
    fw, calls = build({"reserve": ["A", "B", "C"]}, {"B": Injected(reserve_status=unschedulable("full"))})
    st = fw.run_reserve_plugins_reserve(CycleState(), pod, "n0")
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "B"
    assert [c[0] for c in calls] == ["A", "B"]
    calls.clear()
    fw.run_reserve_plugins_unreserve(CycleState(), pod, "n0")
    assert calls == [("C", "unreserve"), ("B", "unreserve"), ("A", "unreserve")]

    fw, _ = build({"reserve": ["A"]}, {"A": Injected(reserve_status=Status(Code.ERROR, "e"))})
    st = fw.run_reserve_plugins_reserve(CycleState(), pod, "n0")
    assert st.code() == Code.ERROR and st.message() == 'running Reserve plugin "A": e'


def test_unreserve_survives_exceptions(pod):
    fw, calls = build({"reserve": ["A", "B"]}, {"B": Injected(raise_in={"unreserve"})})
    fw.run_reserve_plugins_unreserve(CycleState(), pod, "n0")
    assert calls == [("B", "unreserve"), ("A", "unreserve")]


def test_permit_success_rejection_error(pod):
    fw, calls = build({"permit": ["A", "B"]})
    assert fw.run_permit_plugins(CycleState(), pod, "n0") is None
    assert not fw.will_wait_on_permit(pod)

    fw, calls = build({"permit": ["A", "B"]}, {"A": Injected(permit_status=unschedulable("no"))})
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "A" and calls == [("A", "permit")]

    fw, _ = build({"permit": ["A"]}, {"A": Injected(permit_status=Status(Code.ERROR, "x"))})
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.ERROR and st.message() == 'running Permit plugin "A": x' and st.plugin() == "A"


def _waiting(pod, timeouts, clock=None):
    inj = {n: Injected(permit_status=Status(Code.WAIT), permit_timeout=t) for n, t in timeouts.items()}
    fw, _ = build({"permit": list(timeouts)}, inj, clock=clock or VirtualClock())
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.WAIT
    assert st.message() == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    assert fw.will_wait_on_permit(pod)
    return fw


def test_permit_wait_then_allow_by_every_plugin(pod):
    fw = _waiting(pod, {"A": 10, "B": 20})
    wp = fw.get_waiting_pod(pod.uid)
    assert sorted(wp.get_pending_plugins()) == ["A", "B"]
    wp.allow("A")
    assert not wp.signalled
    wp.allow("B")
    assert fw.wait_on_permit(pod) is None
    assert not fw.will_wait_on_permit(pod)
    assert fw.clock.now() == 0  # allowed before any timer: no virtual time passed


def test_permit_wait_then_reject(pod):
    fw = _waiting(pod, {"A": 10})
    seen = []
    fw.iterate_over_waiting_pods(lambda wp: seen.append(wp.get_pod().name))
    assert seen == ["p"]
    fw.get_waiting_pod(pod.uid).reject("Coscheduling", "group failed")
    st = fw.wait_on_permit(pod)
    assert st.code() == Code.UNSCHEDULABLE and st.message() == "group failed" and st.plugin() == "Coscheduling"


def test_reject_waiting_pod_by_uid(pod):
    fw = _waiting(pod, {"A": 10})
    assert fw.reject_waiting_pod(pod.uid)
    assert not fw.reject_waiting_pod("no-such-uid")
    st = fw.wait_on_permit(pod)
    assert st.code() == Code.UNSCHEDULABLE and st.message() == "removed"


def test_permit_timeout_in_virtual_time(pod):
    fw = _waiting(pod, {"A": 30, "B": 10})
    st = fw.wait_on_permit(pod)
    assert st.code() == Code.UNSCHEDULABLE
    assert st.message() == "rejected due to timeout after waiting 10s at plugin B" and st.plugin() == "B"
    assert fw.clock.now() == 10


def test_permit_timeout_is_capped_at_15_minutes(pod):
    fw = _waiting(pod, {"A": 3600})
    st = fw.wait_on_permit(pod)
    assert st.message() == "rejected due to timeout after waiting 15m0s at plugin A"
    assert fw.clock.now() == 900


def test_permit_timeout_in_real_time(pod):
    fw = _waiting(pod, {"A": 0.05}, clock=RealClock())
    st = fw.wait_on_permit(pod)
    assert st.message() == "rejected due to timeout after waiting 50ms at plugin A"


def test_permit_allowed_by_a_clock_event_in_real_time(pod):
    """On a real clock the waiting pod steps the clock's events (it sleeps until each): one that
    allows it ends the wait then, long before the timeout."""
    import time

    fw = _waiting(pod, {"A": 30}, clock=RealClock())
    waiting = fw.waiting_pods.get(pod.uid)
    fw.clock.after_func(0.2, lambda: waiting.allow("A"))
    started = time.monotonic()
    assert fw.wait_on_permit(pod) is None
    assert 0.15 < time.monotonic() - started < 5


def test_permit_allowed_from_another_thread_in_real_time(pod):
    """On a real clock the waiting pod sleeps in the clock's step until its next event; a plugin
    allowing it from another thread (upstream's Allow from any goroutine) wakes it then, long
    before its timeout."""
    import threading
    import time

    fw = _waiting(pod, {"A": 30}, clock=RealClock())
    waiting = fw.waiting_pods.get(pod.uid)
    threading.Timer(0.2, lambda: waiting.allow("A")).start()
    started = time.monotonic()
    assert fw.wait_on_permit(pod) is None
    assert 0.15 < time.monotonic() - started < 5


def test_a_real_clock_woken_early_runs_nothing_before_its_time():
    """A wake (or an earlier event scheduled from another thread) cuts the sleep short; the event
    the clock slept for still runs at its time, and the earlier one first."""
    import threading
    import time

    clock = RealClock()
    ran = []
    scheduled = []
    started = time.monotonic()
    clock.after_func(1.0, lambda: ran.append(("late", time.monotonic())))

    def schedule_early():
        scheduled.append(time.monotonic())
        clock.after_func(0.1, lambda: ran.append(("early", time.monotonic())))

    threading.Timer(0.1, schedule_early).start()
    while len(ran) < 2:
        clock.step()
    # The early event ran before the late one was due: the sleep was cut short (without the wake
    # it would run at 1.0 s, right before the late one). The bound is loose because on a loaded
    # machine the timer thread and the wake may be late by far more than their 0.2 s.
    assert [name for name, _ in ran] == ["early", "late"]
    assert ran[0][1] - scheduled[0] >= 0.099 and ran[0][1] - started < 0.9
    assert ran[1][1] - started >= 0.999


def test_wait_on_permit_for_a_pod_that_is_not_waiting(pod):
    fw, _ = build({"permit": ["A"]})
    assert fw.wait_on_permit(pod) is None


# -- PreBind / Bind / PostBind ---------------------------------------------------------------------------------
def test_pre_bind_pre_flights(pod):
    skip = Status(Code.SKIP)
    fw, _ = build({"pre_bind": ["A", "B"]}, {"A": Injected(pre_bind_pre_flight_status=skip),
                                              "B": Injected(pre_bind_pre_flight_status=Status(Code.SKIP))})
    state = CycleState()
    st = fw.run_pre_bind_pre_flights(state, pod, "n0")
    assert st.code() == Code.SKIP and state.skip_pre_bind_plugins == {"A", "B"}

    fw, calls = build({"pre_bind": ["A", "B"]}, {"A": Injected(pre_bind_pre_flight_status=Status(Code.SKIP))})
    state = CycleState()
    assert fw.run_pre_bind_pre_flights(state, pod, "n0") is None
    calls.clear()
    assert fw.run_pre_bind_plugins(state, pod, "n0") is None
    assert calls == [("B", "pre_bind")]  # A skipped its PreBind

    fw, _ = build({"pre_bind": ["A"]}, {"A": Injected(pre_bind_pre_flight_status=Status(Code.ERROR, "e"))})
    assert fw.run_pre_bind_pre_flights(CycleState(), pod, "n0").message() == 'running PreBindPreFlight "A": e'

    fw, _ = build({"pre_bind": ["A"]}, {"A": Injected(pre_bind_pre_flight_status=unschedulable("u"))})
    assert fw.run_pre_bind_pre_flights(CycleState(), pod, "n0").message() == (
        'PreBindPreFlight A returned "Unschedulable", which is unsupported. It is supposed to return '
        'Success, Skip, or Error status')


def test_pre_bind_rejection_and_error(pod):
    fw, _ = build({"pre_bind": ["A"]}, {"A": Injected(pre_bind_status=unschedulable("vol"))})
    st = fw.run_pre_bind_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "A"
    fw, _ = build({"pre_bind": ["A"]}, {"A": Injected(pre_bind_status=Status(Code.ERROR, "api"))})
    assert fw.run_pre_bind_plugins(CycleState(), pod, "n0").message() == 'running PreBind plugin "A": api'


def test_bind_skip_passes_to_next(pod):
    fw, calls = build({"bind": ["A", "B", "C"]}, {"A": Injected(bind_status=Status(Code.SKIP))})
    assert fw.run_bind_plugins(CycleState(), pod, "n0") is None
    assert calls == [("A", "bind"), ("B", "bind")]


def test_bind_all_skip_returns_skip(pod):
    fw, _ = build({"bind": ["A"]}, {"A": Injected(bind_status=Status(Code.SKIP))})
    assert fw.run_bind_plugins(CycleState(), pod, "n0").code() == Code.SKIP


def test_bind_rejection_and_error(pod):
    fw, _ = build({"bind": ["A"]}, {"A": Injected(bind_status=unschedulable("gone"))})
    st = fw.run_bind_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "A"
    fw, _ = build({"bind": ["A"]}, {"A": Injected(bind_status=Status(Code.ERROR, "conflict"))})
    assert fw.run_bind_plugins(CycleState(), pod, "n0").message() == 'running Bind plugin "A": conflict'


def test_post_bind_runs_all_even_if_one_raises(pod):
    fw, calls = build({"post_bind": ["A", "B"]}, {"A": Injected(raise_in={"post_bind"})})
    fw.run_post_bind_plugins(CycleState(), pod, "n0")
    assert calls == [("A", "post_bind"), ("B", "post_bind")]


# -- metrics -----------------------------------------------------------------------------------------------
def test_metrics_record_extension_points_and_sampled_plugins(pod, nodes):
    fw, _ = build({"filter": ["A"], "score": ["A"]}, {"A": Injected(score=1)})
    state = CycleState()
    state.set_record_plugin_metrics(True)
    fw.run_filter_plugins(state, pod, nodes[0])
    fw.run_score_plugins(state, pod, nodes)
    snap = fw.metrics.snapshot()
    assert {(e["extension_point"], e["status"]) for e in snap["extension_point_duration"]} == {("Score", "Success")}
    plugin_points = {(e["extension_point"], e["plugin"], e["count"]) for e in snap["plugin_execution_duration"]}
    assert ("Filter", "A", 1) in plugin_points and ("Score", "A", 3) in plugin_points


def test_vectorized_filter_with_nominated_pods_filters_each_node_at_most_twice(pod, make_pod):
    """Upstream runs Filter twice on a node with a higher-priority nominated pod (with it, then
    without) and once elsewhere; the vectorized form must not add a third run on such a node."""
    from fastsched.testing import build_snapshot, make_node
    snapshot = build_snapshot([make_node(f"n{i}") for i in range(4)])
    fw, calls = _nominated_fw([PodInfo(make_pod("high", priority=100))])
    MaxPodsFilter.limit = 1
    res = fw.run_filter_plugins_with_nominated_pods_vectorized(CycleState(), pod, snapshot.batch())
    assert res.all_feasible()
    runs = [c[0] for c in calls if c[1] == "filter"]
    # three plain nodes once each (no pods), n0 twice: with the nominated pod (1), then without (0)
    assert sorted(runs) == [0, 0, 0, 0, 1]


def test_vectorized_filter_with_nominated_pods_keeps_the_two_pass_verdict(pod, make_pod):
    from fastsched.testing import build_snapshot, make_node
    snapshot = build_snapshot([make_node(f"n{i}") for i in range(4)])
    fw, calls = _nominated_fw([PodInfo(make_pod("high", priority=100))])
    MaxPodsFilter.limit = 0
    batch = snapshot.batch()
    res = fw.run_filter_plugins_with_nominated_pods_vectorized(CycleState(), pod, batch)
    position = batch.names.index("n0")
    assert res.status(position).code() == Code.UNSCHEDULABLE and res.status(position).plugin() == "M"
    assert res.num_feasible() == 3
