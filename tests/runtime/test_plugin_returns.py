"""Plugin return values are checked where they cross into the framework (issue 12).

A return of the wrong kind becomes an Error status worded
``plugin "<name>" returned <value> from <Point>: expected <what>``, which then takes upstream's road
for a plugin Error (wrapped as upstream wraps plugin errors); nothing escapes the run_* methods.
"""
import datetime
import math
import warnings

import numpy as np
import pytest

from fastsched import Scheduler, load_config
from fastsched.framework import (BindPlugin, Code, CycleState, FilterPlugin, NodeInfo, NodeToStatus, PermitPlugin,
                                 PodInfo, PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin, PreFilterExtensions,
                                 PreFilterPlugin, PreScorePlugin, QueueSortPlugin, ReservePlugin, ScoreExtensions,
                                 ScorePlugin, Status)
from fastsched.framework.types import PreFilterResult
from fastsched.framework.vectorized import FilterVerdicts
from fastsched.runtime import Registry, new_framework
from fastsched.testing import make_node, make_pod, random_snapshot

from .fakes import registry_of
from .test_new_framework import profile, pset

ERR = Code.ERROR


class Returns(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, PreScorePlugin, ScorePlugin,
              ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, PreFilterExtensions, ScoreExtensions):
    """A plugin whose methods return what it is told: ``values[method]`` (a callable is called with
    the method's arguments). Unlisted methods return what a well-behaved plugin returns."""

    __test__ = False
    DEFAULTS = {"pre_enqueue": None, "pre_filter": (None, None), "filter": None, "post_filter": (None, None),
                "pre_score": None, "score": (10, None), "normalize_score": None, "reserve": None,
                "permit": (None, 0.0), "pre_bind_pre_flight": None, "pre_bind": None, "bind": None,
                "add_pod": None, "remove_pod": None}

    def __init__(self, name="R", **values):
        self._name = name
        self.values = values

    def name(self):
        return self._name

    def _ret(self, method, *args):
        v = self.values.get(method, self.DEFAULTS[method])
        return v(*args) if callable(v) else v

    def pre_enqueue(self, pod):
        return self._ret("pre_enqueue", pod)

    def pre_filter(self, state, pod, nodes):
        return self._ret("pre_filter", state, pod, nodes)

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        return self._ret("add_pod", state, pod_to_schedule, pod_info_to_add, node_info)

    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        return self._ret("remove_pod", state, pod_to_schedule, pod_info_to_remove, node_info)

    def filter(self, state, pod, node_info):
        return self._ret("filter", state, pod, node_info)

    def post_filter(self, state, pod, m):
        return self._ret("post_filter", state, pod, m)

    def pre_score(self, state, pod, nodes):
        return self._ret("pre_score", state, pod, nodes)

    def score(self, state, pod, node_info):
        return self._ret("score", state, pod, node_info)

    def score_extensions(self):
        return self if "normalize_score" in self.values else None

    def normalize_score(self, state, pod, scores):
        return self._ret("normalize_score", scores)

    def reserve(self, state, pod, node_name):
        return self._ret("reserve", state, pod, node_name)

    def unreserve(self, state, pod, node_name):
        return "ignored"

    def permit(self, state, pod, node_name):
        return self._ret("permit", state, pod, node_name)

    def pre_bind_pre_flight(self, state, pod, node_name):
        return self._ret("pre_bind_pre_flight", state, pod, node_name)

    def pre_bind(self, state, pod, node_name):
        return self._ret("pre_bind", state, pod, node_name)

    def bind(self, state, pod, node_name):
        return self._ret("bind", state, pod, node_name)


def fw_with(plugin, *points):
    """A framework running ``plugin`` at ``points`` (Score with weight 1)."""
    prof = profile(**{p: pset(plugin.name()) for p in points})
    return new_framework(registry_of(plugin), prof)


@pytest.fixture
def nodes():
    return [NodeInfo(make_node(f"n{i}")) for i in range(3)]


def msg(name, value, point, expected):
    return f'plugin "{name}" returned {value} from {point}: expected {expected}'


# -- Filter ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,shown", [("ok", "'ok'"), (True, "True"), (0, "0"), (1.5, "1.5"),
                                         ((None,), "(None,)")],
                         ids=["str-ok", "True", "zero", "float", "tuple"])
def test_filter_returning_a_non_status_is_an_error(value, shown, nodes):
    fw = fw_with(Returns("F", filter=value), "filter")
    st = fw.run_filter_plugins(CycleState(), make_pod("p"), nodes[0])
    assert st.code() == ERR and st.plugin() == "F"
    assert st.message() == 'running "F" filter plugin: ' + msg("F", shown, "Filter", "a Status or None")


@pytest.mark.parametrize("batch", [False, True], ids=["node-infos", "node-batch"])
def test_filter_returning_ok_on_the_batch_path(batch):
    snap = random_snapshot(1, 4, 0)
    nodes = snap.batch() if batch else list(snap.batch())
    fw = fw_with(Returns("F", filter="ok"), "filter")
    res = fw.run_filter_plugins_vectorized(CycleState(), make_pod("p"), nodes)
    st = res.status(0)
    assert st.code() == ERR and st.plugin() == "F"
    assert st.message() == 'running "F" filter plugin: ' + msg("F", "'ok'", "Filter", "a Status or None")
    assert res.first_error() == 0 and res.num_feasible() == 0


def test_filter_status_subclasses_and_none_are_accepted(nodes):
    class MyStatus(Status):
        pass

    fw = fw_with(Returns("F", filter=lambda s, p, ni: MyStatus(Code.UNSCHEDULABLE, "mine")
                         if ni.node().name == "n1" else None), "filter")
    assert fw.run_filter_plugins(CycleState(), make_pod("p"), nodes[0]) is None
    st = fw.run_filter_plugins(CycleState(), make_pod("p"), nodes[1])
    assert st.code() == Code.UNSCHEDULABLE and st.message() == "mine"


class BatchFilter(FilterPlugin):
    """A plugin whose filter_vectorized returns ``make(m)``; its per-node filter passes everything."""

    def __init__(self, make):
        self.make = make

    def name(self):
        return "BF"

    def filter(self, state, pod, node_info):
        return None

    def filter_vectorized(self, state, pod, nodes):
        return self.make(len(nodes))


def _verdicts(codes, rids, reasons):
    r = FilterVerdicts(np.zeros(len(codes), np.int8))
    r.codes, r.reason_ids, r.reasons = codes, rids, reasons
    return r


def _fbr(codes, rids, reasons):
    return (f"FilterVerdicts(codes=ndarray(shape=(4,), dtype={codes}), reason_ids=ndarray(shape=(4,), "
            f"dtype={rids}), reasons={reasons})")


@pytest.mark.parametrize("make,shown", [
    (lambda m: [None] * m, "[None, None, None, None]"),
    (lambda m: "ok", "'ok'"),
    (lambda m: FilterVerdicts(np.zeros(m - 1, np.int8)),
     "FilterVerdicts(codes=ndarray(shape=(3,), dtype=int8), reason_ids=ndarray(shape=(3,), dtype=int32), "
     "reasons=[])"),
    (lambda m: _verdicts(np.zeros(m, np.float64), np.full(m, -1, np.int32), []), _fbr("float64", "int32", "[]")),
    (lambda m: _verdicts(np.full(m, 9, np.int8), np.full(m, -1, np.int32), []), _fbr("int8", "int32", "[]")),
    (lambda m: _verdicts(np.full(m, 2, np.int8), np.full(m, 3, np.int32), [("a",)]),
     _fbr("int8", "int32", "[('a',)]")),
    (lambda m: _verdicts(np.full(m, 2, np.int8), np.zeros(m, np.int32), ["not a tuple"]),
     _fbr("int8", "int32", "['not a tuple']")),
    (lambda m: _verdicts(np.full(m, 2, np.int8), np.zeros(m, np.int32), [(1, 2)]), _fbr("int8", "int32", "[(1, 2)]")),
], ids=["list", "str", "short", "float-codes", "unknown-code", "reason-id-out-of-range", "reason-not-tuple",
        "reason-not-str"])
def test_filter_batch_returning_the_wrong_verdicts_is_an_error(make, shown):
    snap = random_snapshot(1, 4, 0)
    fw = fw_with(BatchFilter(make), "filter")
    res = fw.run_filter_plugins_vectorized(CycleState(), make_pod("p"), snap.batch())
    st = res.status(2)
    assert st.code() == ERR and st.plugin() == "BF" and res.num_feasible() == 0
    assert st.message() == 'running "BF" filter plugin: ' + msg(
        "BF", shown, "Filter (filter_vectorized)", "a FilterVerdicts with 4 verdicts (one per node), a Status or None")


def test_filter_batch_valid_verdicts_still_pass():
    snap = random_snapshot(1, 4, 0)
    fw = fw_with(BatchFilter(lambda m: FilterVerdicts.from_mask(np.arange(m) == 1, Code.UNSCHEDULABLE, "x")),
                 "filter")
    res = fw.run_filter_plugins_vectorized(CycleState(), make_pod("p"), snap.batch())
    assert res.feasible().tolist() == [True, False, True, True]
    assert res.status(1).message() == "x" and res.status(1).code() == Code.UNSCHEDULABLE


# -- Score ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,shown", [
    ((50.7, None), "(50.7, None)"),
    (("50", None), "('50', None)"),
    ((True, None), "(True, None)"),
    (None, "None"),
    (50, "50"),
    ((50, None, None), "(50, None, None)"),
    ((2**63, None), "(9223372036854775808, None)"),
    ((np.float64(5.0), None), "(np.float64(5.0), None)" if np.__version__ >= "2" else "(5.0, None)"),
    ((50, "ok"), "(50, 'ok')"),
], ids=["float", "str", "bool", "None", "bare-int", "triple", "over-int64", "numpy-float", "bad-status"])
def test_score_returning_the_wrong_kind_is_an_error(value, shown, nodes):
    fw = fw_with(Returns("S", score=value), "score")
    scores, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert scores is None and st.code() == ERR
    assert st.message() == ('running Score plugins: plugin "S" failed with: '
                            + msg("S", shown, "Score", "an (int, Status or None) pair"))


@pytest.mark.parametrize("value", [7, np.int32(7), np.int64(7), np.uint8(7)], ids=["int", "int32", "int64", "uint8"])
def test_score_accepts_python_and_numpy_integers(value, nodes):
    fw = fw_with(Returns("S", score=(value, None)), "score")
    scores, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st is None and [s.total_score for s in scores] == [7, 7, 7]


def test_score_out_of_range_after_normalize_has_upstreams_message(nodes):
    fw = fw_with(Returns("S", score=(101, None)), "score")
    _, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.code() == ERR
    assert st.message() == ('applying score defaultWeights on Score plugins: plugin "S" returns an invalid score '
                            '101, it should in the range of [0, 100] after normalizing')


def test_normalize_score_leaving_a_non_int_is_an_error(nodes):
    def halve(scores):
        for s in scores:
            s.score = s.score / 2

    fw = fw_with(Returns("S", score=(11, None), normalize_score=halve), "score")
    _, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.code() == ERR
    assert st.message() == ("running Normalize on Score plugins: plugin \"S\" failed with: "
                            + msg("S", "NodeScore(name='n0', score=5.5)", "NormalizeScore",
                                  "an int score (in int64) for every node it was given"))


def test_normalize_score_dropping_nodes_is_an_error(nodes):
    fw = fw_with(Returns("S", normalize_score=lambda scores: scores.pop() and None), "score")
    _, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.code() == ERR and 'plugin "S" returned [NodeScore(' in st.message()
    assert st.message().endswith("from NormalizeScore: expected 3 NodeScores, an int score (in int64) for every "
                                 "node it was given")


def test_normalize_score_returning_a_non_status_is_an_error(nodes):
    fw = fw_with(Returns("S", normalize_score=lambda scores: 1), "score")
    _, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.message() == ('running Normalize on Score plugins: plugin "S" failed with: '
                            + msg("S", "1", "NormalizeScore", "a Status or None"))


class BatchScore(ScorePlugin):
    def __init__(self, out):
        self.out = out

    def name(self):
        return "BS"

    def score(self, state, pod, node_info):
        return 0, None

    def score_vectorized(self, state, pod, nodes):
        return self.out(len(nodes)) if callable(self.out) else self.out


@pytest.mark.parametrize("make,shown", [
    (lambda n: ([1] * n, None), "([1, 1, 1, 1], None)"),
    (lambda n: (np.full(n, 1.5), None), "(ndarray(shape=(4,), dtype=float64), None)"),
    (lambda n: (np.ones(n, bool), None), "(ndarray(shape=(4,), dtype=bool), None)"),
    (lambda n: (np.ones(n - 1, np.int64), None), "(ndarray(shape=(3,), dtype=int64), None)"),
    (lambda n: (np.ones((n, 1), np.int64), None), "(ndarray(shape=(4, 1), dtype=int64), None)"),
    (lambda n: (np.full(n, 2**63, np.uint64), None), "(ndarray(shape=(4,), dtype=uint64), None)"),
    (lambda n: (np.int64(5), None), "(np.int64(5), None)" if np.__version__ >= "2" else "(5, None)"),
], ids=["list", "float", "bool", "short", "2d", "uint64-overflow", "scalar"])
def test_score_batch_returning_the_wrong_array_is_an_error(make, shown):
    snap = random_snapshot(1, 4, 0)
    fw = fw_with(BatchScore(make), "score")
    m, st = fw.run_score_plugins_matrix(CycleState(), make_pod("p"), snap.batch())
    assert m is None and st.code() == ERR
    assert st.message() == ('running Score plugins: plugin "BS" failed with: '
                            + msg("BS", shown, "Score (score_vectorized)",
                                  "an (integer ndarray of shape (4,), Status or None) pair"))


@pytest.mark.parametrize("out,shown", [("x", "'x'"), ((np.zeros(4, np.int64), "ok"), None)],
                         ids=["not-a-pair", "bad-status"])
def test_score_batch_returning_a_bad_pair_is_an_error(out, shown):
    snap = random_snapshot(1, 4, 0)
    fw = fw_with(BatchScore(out), "score")
    m, st = fw.run_score_plugins_matrix(CycleState(), make_pod("p"), snap.batch())
    assert m is None and st.code() == ERR
    if shown is None:
        shown = "(ndarray(shape=(4,), dtype=int64), 'ok')"
    assert st.message() == ('running Score plugins: plugin "BS" failed with: '
                            + msg("BS", shown, "Score (score_vectorized)",
                                  "an (integer ndarray with one score per node, Status or None) pair"))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])
def test_score_batch_accepts_integer_arrays(dtype):
    snap = random_snapshot(1, 4, 0)
    fw = fw_with(BatchScore(lambda n: (np.arange(n, dtype=dtype), None)), "score")
    m, st = fw.run_score_plugins_matrix(CycleState(), make_pod("p"), snap.batch())
    assert st is None and m.totals.tolist() == [0, 1, 2, 3]


# -- PreFilter / PostFilter / PreScore / AddPod -------------------------------------------------------------
@pytest.mark.parametrize("value,shown", [
    ("garbage", "'garbage'"),
    (None, "None"),
    ((["n1"], None), "(['n1'], None)"),
    ((None, "ok"), "(None, 'ok')"),
    ((None, None, None), "(None, None, None)"),
], ids=["str", "None", "list-result", "str-status", "triple"])
def test_pre_filter_returning_garbage_is_an_error(value, shown, nodes):
    fw = fw_with(Returns("P", pre_filter=value), "pre_filter")
    record = {}
    res, st, with_nodes = fw.run_pre_filter_plugins(CycleState(), make_pod("p"), nodes, record=record)
    assert res is None and with_nodes == set()
    assert st.code() == ERR and st.plugin() == "P"
    assert st.message() == ('running PreFilter plugin "P": '
                            + msg("P", shown, "PreFilter", "a (PreFilterResult or None, Status or None) pair"))
    assert record["P"][1].code() == ERR


def test_post_filter_returning_garbage_is_an_error():
    fw = fw_with(Returns("PF", post_filter=("nominate me", None)), "post_filter")
    res, st = fw.run_post_filter_plugins(CycleState(), make_pod("p"), NodeToStatus())
    assert res is None and st.code() == ERR and st.plugin() == "PF"
    assert st.message() == msg("PF", "('nominate me', None)", "PostFilter",
                               "a (PostFilterResult or None, Status or None) pair")


def test_pre_score_returning_garbage_is_an_error(nodes):
    fw = fw_with(Returns("PS", pre_score=1), "pre_score")
    st = fw.run_pre_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.code() == ERR
    assert st.message() == 'running PreScore plugin "PS": ' + msg("PS", "1", "PreScore", "a Status or None")


def test_add_pod_returning_garbage_is_an_error(nodes):
    fw = fw_with(Returns("A", add_pod="fine"), "pre_filter")
    other = PodInfo(make_pod("other"))
    st = fw.run_pre_filter_extension_add_pod(CycleState(), make_pod("p"), other, nodes[0])
    assert st.code() == ERR
    assert st.message() == 'running AddPod on PreFilter plugin "A": ' + msg("A", "'fine'", "AddPod",
                                                                             "a Status or None")


# -- Reserve / Permit / PreBind / Bind ----------------------------------------------------------------------
def test_reserve_pre_bind_bind_returning_garbage_are_errors():
    pod = make_pod("p")
    fw = fw_with(Returns("X", reserve="ok", pre_bind=["ok"], bind=True), "reserve", "pre_bind", "bind")
    st = fw.run_reserve_plugins_reserve(CycleState(), pod, "n0")
    assert st.code() == ERR
    assert st.message() == 'running Reserve plugin "X": ' + msg("X", "'ok'", "Reserve", "a Status or None")
    st = fw.run_pre_bind_plugins(CycleState(), pod, "n0")
    assert st.message() == 'running PreBind plugin "X": ' + msg("X", "['ok']", "PreBind", "a Status or None")
    st = fw.run_bind_plugins(CycleState(), pod, "n0")
    assert st.code() == ERR
    assert st.message() == 'running Bind plugin "X": ' + msg("X", "True", "Bind", "a Status or None")


def _raise(*args):
    raise RuntimeError("boom")


@pytest.mark.parametrize("value", ["ok", _raise, Status(Code.UNSCHEDULABLE, "no"), Status(Code.SKIP),
                                   Status(Code.ERROR, "bad"), None], ids=["garbage", "raises", "rejected", "skip",
                                                                          "error", "success"])
def test_reserve_pre_bind_bind_same_results_whether_plugin_durations_are_sampled_or_not(value):
    """Reserve, PreBind and Bind call plugins directly unless the cycle samples plugin durations
    (then through the timing wrapper): both roads give the same statuses."""
    pod = make_pod("p")

    def run(record):
        fw = fw_with(Returns("X", reserve=value, pre_bind=value, bind=value), "reserve", "pre_bind", "bind")
        out = []
        for method in (fw.run_reserve_plugins_reserve, fw.run_pre_bind_plugins, fw.run_bind_plugins):
            state = CycleState()
            state.set_record_plugin_metrics(record)
            st = method(state, pod, "n0")
            out.append(None if st is None else (st.code(), st.message(), st.plugin()))
        sampled = {(p, pl) for (p, pl, c) in fw.metrics.plugin_execution_duration}
        return out, sampled

    plain, not_sampled = run(False)
    timed, sampled = run(True)
    assert plain == timed
    assert not not_sampled
    if isinstance(value, str) or value is _raise:
        assert not sampled  # a broken return is not timed (as before)
    else:
        assert sampled == {("Reserve", "X"), ("PreBind", "X"), ("Bind", "X")}


def test_pre_bind_pre_flight_returning_garbage_is_an_error():
    fw = fw_with(Returns("X", pre_bind_pre_flight=0), "pre_bind")
    st = fw.run_pre_bind_pre_flights(CycleState(), make_pod("p"), "n0")
    assert st.code() == ERR
    assert st.message() == 'running PreBindPreFlight "X": ' + msg("X", "0", "PreBindPreFlight", "a Status or None")


WAIT_EXPECTED = "a (Status or None, timeout in seconds) pair with a real-number timeout"


@pytest.mark.parametrize("timeout,shown", [("10s", "'10s'"), (None, "None"), (float("nan"), "nan"),
                                           (True, "True")],
                         ids=["str", "None", "nan", "bool"])
def test_permit_wait_with_a_bad_timeout_is_an_error(timeout, shown):
    fw = fw_with(Returns("W", permit=(Status(Code.WAIT), timeout)), "permit")
    pod = make_pod("p")
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == ERR and st.plugin() == "W"
    assert st.message() == 'running Permit plugin "W": ' + msg("W", f"(Status(code=Wait), {shown})", "Permit",
                                                               WAIT_EXPECTED)
    assert not fw.will_wait_on_permit(pod)


@pytest.mark.parametrize("timeout,want", [(30, 30.0), (2.5, 2.5), (datetime.timedelta(minutes=1), 60.0),
                                          (np.float32(4), 4.0), (math.inf, 900.0)],
                         ids=["int", "float", "timedelta", "numpy", "inf-capped"])
def test_permit_wait_accepts_real_timeouts(timeout, want):
    fw = fw_with(Returns("W", permit=(Status(Code.WAIT), timeout)), "permit")
    pod = make_pod("p")
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.WAIT
    st = fw.wait_on_permit(pod)
    assert st.code() == Code.UNSCHEDULABLE and fw.clock.now() == want


@pytest.mark.parametrize("timeout,shown", [(-1, "-1s"), (-2.5, "-2.5s"), (datetime.timedelta(seconds=-90), "-1m30s"),
                                           (np.int64(-3), "-3s"), (-0.25, "-250ms"),
                                           (-math.inf, "-2562047h47m16.854775808s")],
                         ids=["int", "float", "timedelta", "numpy", "sub-second", "-inf"])
def test_permit_wait_with_a_negative_timeout_is_rejected_by_the_timeout_at_once(timeout, shown):
    """Upstream's newWaitingPod arms ``time.AfterFunc(waitTime, ...)``, which with a negative
    duration fires at once: the pod waits, then is rejected by the timeout, in its words (Go's
    Duration.String of the negative value), the clock not moving. (fastsched took it as a plugin
    Error.)"""
    fw = fw_with(Returns("W", permit=(Status(Code.WAIT), timeout)), "permit")
    pod = make_pod("p")
    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code() == Code.WAIT and fw.will_wait_on_permit(pod)
    st = fw.wait_on_permit(pod)
    assert st.code() == Code.UNSCHEDULABLE and st.plugin() == "W"
    assert st.message() == f"rejected due to timeout after waiting {shown} at plugin W"
    assert fw.clock.now() == 0


def test_permit_timeout_is_not_read_unless_waiting():
    fw = fw_with(Returns("W", permit=(None, "whatever")), "permit")
    assert fw.run_permit_plugins(CycleState(), make_pod("p"), "n0") is None


@pytest.mark.parametrize("value,shown", [("ok", "'ok'"), ((None,), "(None,)"), ((True, 10), "(True, 10)")],
                         ids=["str", "1-tuple", "bool-status"])
def test_permit_returning_garbage_is_an_error(value, shown):
    fw = fw_with(Returns("W", permit=value), "permit")
    st = fw.run_permit_plugins(CycleState(), make_pod("p"), "n0")
    assert st.code() == ERR
    assert st.message() == 'running Permit plugin "W": ' + msg("W", shown, "Permit",
                                                               "a (Status or None, timeout in seconds) pair")


# -- PreEnqueue / QueueSort ---------------------------------------------------------------------------------
def test_pre_enqueue_returning_garbage_is_an_error():
    fw = fw_with(Returns("G", pre_enqueue="go ahead"), "pre_enqueue")
    [pl] = fw.pre_enqueue_plugins()
    assert isinstance(pl, PreEnqueuePlugin) and pl.name() == "G" and pl.values == {"pre_enqueue": "go ahead"}
    st = pl.pre_enqueue(make_pod("p"))
    assert st.code() == ERR and st.message() == msg("G", "'go ahead'", "PreEnqueue", "a Status or None")


def test_pre_enqueue_raising_is_an_error():
    def boom(pod):
        raise KeyError("x")

    fw = fw_with(Returns("G", pre_enqueue=boom), "pre_enqueue")
    [pl] = fw.pre_enqueue_plugins()
    assert pl.pre_enqueue(make_pod("p")).message() == "KeyError: 'x'"


class Sorter(QueueSortPlugin, BindPlugin):
    def __init__(self, answer):
        self.answer = answer

    def name(self):
        return "QSB"

    def less(self, a, b):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def bind(self, state, pod, node_name):
        return None


@pytest.mark.parametrize("answer,result", [(True, True), (np.bool_(True), True), (False, False)])
def test_queue_sort_bools(answer, result):
    r = Registry({"QSB": lambda a, h: Sorter(answer)})
    less = new_framework(r, profile()).queue_sort_func()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert less(1, 2) is result


@pytest.mark.parametrize("answer,shown", [("yes", "returned 'yes'"), (ValueError("boom"), "raised ValueError: boom")])
def test_queue_sort_garbage_counts_as_false_with_one_warning(answer, shown):
    r = Registry({"QSB": lambda a, h: Sorter(answer)})
    less = new_framework(r, profile()).queue_sort_func()
    with pytest.warns(RuntimeWarning) as rec:
        assert less(1, 2) is False and less(2, 1) is False
    assert [str(w.message) for w in rec] == [
        f'QueueSort plugin "QSB" {shown} from Less: expected a bool; such comparisons count as False']


# -- the scheduling loop goes on ----------------------------------------------------------------------------
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      {point}: {{enabled: [{{name: Odd{weight}}}]}}
"""


def scheduler_with(point, **values):
    """A Scheduler whose profile adds Odd (a Returns plugin) at ``point``; Odd misbehaves only for
    pods whose name starts with "bad"."""
    def per_pod(method, good):
        bad = values[method]

        def ret(*args):
            pod = next(a for a in args if hasattr(a, "containers"))
            return bad if pod.name.startswith("bad") else good
        return ret

    plugin_values = {m: per_pod(m, Returns.DEFAULTS[m]) for m in values}
    weight = ", weight: 1" if point == "score" else ""
    cfg = load_config(CONFIG.format(point=point, weight=weight), registry_names=["Odd"])
    s = Scheduler(cfg, registry=Registry({"Odd": lambda args, h: Returns("Odd", **plugin_values)}), seed=0)
    s.add_nodes([make_node(f"n{i}") for i in range(3)])
    return s


@pytest.mark.parametrize("point,values,message", [
    ("filter", {"filter": "ok"},
     'running "Odd" filter plugin: ' + msg("Odd", "'ok'", "Filter", "a Status or None")),
    ("filter", {"filter": 0},
     'running "Odd" filter plugin: ' + msg("Odd", "0", "Filter", "a Status or None")),
    ("score", {"score": (50.7, None)},
     'running Score plugins: plugin "Odd" failed with: ' + msg("Odd", "(50.7, None)", "Score",
                                                               "an (int, Status or None) pair")),
    ("preFilter", {"pre_filter": "garbage"},
     'running PreFilter plugin "Odd": ' + msg("Odd", "'garbage'", "PreFilter",
                                              "a (PreFilterResult or None, Status or None) pair")),
    ("permit", {"permit": (Status(Code.WAIT), float("nan"))},
     'running Permit plugin "Odd": ' + msg("Odd", "(Status(code=Wait), nan)", "Permit", WAIT_EXPECTED)),
], ids=["filter-ok", "filter-0", "score-float", "prefilter-garbage", "permit-nan-timeout"])
def test_scheduler_run_returns_and_the_pod_fails_with_error(point, values, message):
    s = scheduler_with(point, **values)
    s.add_pod(make_pod("bad-pod"))
    s.add_pod(make_pod("good-pod"))
    results = {r.pod.name: r for r in s.run()}
    bad = results["bad-pod"]
    assert bad.status == "Error" and bad.node_name is None
    assert bad.message == message
    assert results["good-pod"].scheduled  # the loop went on


# -- only what upstream reads is checked --------------------------------------------------------------------
def test_score_with_a_failing_status_keeps_the_plugins_own_error(nodes):
    fw = fw_with(Returns("S", score=(None, Status(Code.ERROR, "own failure"))), "score")
    _, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes)
    assert st.message() == 'running Score plugins: plugin "S" failed with: own failure'


def test_pre_filter_result_is_not_read_when_the_status_rejects(nodes):
    fw = fw_with(Returns("P", pre_filter=("junk", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no"))), "pre_filter")
    res, st, _ = fw.run_pre_filter_plugins(CycleState(), make_pod("p"), nodes)
    assert res is None and st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == "no"


class _Pair(tuple):
    """A tuple subclass (a plugin may return one)."""

    __slots__ = ()


class _MyStatus(Status):
    """A Status subclass."""

    __slots__ = ()


_PRE_FILTER_ANSWERS = [
    "garbage", None, (None, None, None), (["n1"], None), (None, "ok"), _raise, (None, None),
    _Pair((None, None)), (None, _MyStatus(Code.UNSCHEDULABLE, "sub")), _Pair((None, "bad")),
    (None, Status(Code.SKIP)), (None, Status(Code.UNSCHEDULABLE, "no")),
    (None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never")), (None, Status(Code.ERROR, "bad")),
    (PreFilterResult({"n0", "n1"}), None), (PreFilterResult({"n2"}), None), (PreFilterResult(set()), None),
    (PreFilterResult({"n1"}), Status(Code.SKIP)), (PreFilterResult(None), None),
]


@pytest.mark.parametrize("seed", range(6))
def test_pre_filter_same_results_whether_plugin_durations_are_sampled_or_not(seed, nodes):
    """RunPreFilterPlugins calls the plugins directly unless the cycle samples plugin durations
    (then through the timing wrapper): both roads give the same result, status, narrowing plugins,
    skip set and recorded answers, over random sequences of well-formed and broken answers."""
    import random

    rng = random.Random(seed)
    for _ in range(40):
        answers = [rng.choice(_PRE_FILTER_ANSWERS) for _ in range(rng.randint(1, 4))]

        def run(record_metrics):
            plugins = [Returns(f"P{i}", pre_filter=a) for i, a in enumerate(answers)]
            prof = profile(pre_filter=pset(*[p.name() for p in plugins]))
            fw = new_framework(registry_of(*plugins), prof)
            state = CycleState()
            state.set_record_plugin_metrics(record_metrics)
            record: dict = {}
            res, st, with_nodes = fw.run_pre_filter_plugins(state, make_pod("p"), nodes, record=record)
            shown = {name: (None if r is None else sorted(r.node_names or ["<all>"]),
                            None if s is None else (s.code(), s.message(), s.plugin()))
                     for name, (r, s) in record.items()}
            return ((None if res is None else (type(res).__name__, None if res.node_names is None
                                               else sorted(res.node_names))),
                    None if st is None else (st.code(), st.message(), st.plugin()),
                    sorted(with_nodes), sorted(state.skip_filter_plugins), shown)

        assert run(False) == run(True), answers
