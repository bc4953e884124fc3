"""SchedulingThroughput as upstream's ``throughputCollector`` computes it (v1.37.2
``test/integration/scheduler_perf/util.go``), on synthetic bind timelines.

Upstream's rules: a ticker every 1 s from the collection's start; a tick with no watched pod
bound yet (pods already bound in the watched namespaces count) does nothing; the first tick
with one starts sampling and is discarded; a tick with no new bind is merged into the next one
with a bind, whose rate (new pods / time since the last kept tick) is recorded once per merged
tick; the interval between the last tick and the end is dropped; no sample at all gives no
SchedulingThroughput item (a warning, no threshold check). ``Average`` is the mean of the sorted
samples, ``PercNN`` the sorted sample at ``ceil(n*NN/100)-1``. The phase ends at the first 1 s
poll of the wait after its last bind (``PollUntilContextTimeout(1s, immediate)``): the ticks up to
that poll still sample.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fastsched.clock import VirtualClock
from fastsched.perf.config import MetricSelector
from fastsched.perf.metrics import Collection, WorkloadResult
from fastsched.perf.runner import WAIT_TIMEOUT, _Executor
from fastsched.scheduler.scheduler import SchedulerMetrics

NS = "measured-ns"


def _pod(ns: str = NS, node: str = "node-0", labels: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(namespace=ns, labels=labels or {}, node_name=node)


def _executor(bound: tuple = ()) -> _Executor:
    """An executor with only what a collection and ``_wait`` read: a virtual clock, the metrics,
    the pods already bound."""
    ex = _Executor.__new__(_Executor)
    ex.clock = VirtualClock()
    ex.sched = SimpleNamespace(metrics=SchedulerMetrics(),
                               pods_in_namespace=lambda ns: [p for p in bound if p.namespace == ns])
    ex.tc = SimpleNamespace(name="Case", metrics_collector_config=None)
    ex.w = SimpleNamespace(name="w")
    ex.result = WorkloadResult("Case", "w", "passed", threshold=100.0, selector=MetricSelector())
    ex.warned = set()
    ex.collection = None
    ex.wait_timeout = WAIT_TIMEOUT
    return ex


def _spread(counts: list[int]) -> list[float]:
    """Bind times: counts[k] pods evenly inside (k, k+1), none on a tick."""
    return [k + (i + 1) / (c + 1) for k, c in enumerate(counts) for i in range(c)]


def _run(binds: list[float], end: float, *, chunk: float | None = None, bound: tuple = ()):
    """Bind the pods at ``binds`` and stop the collection at ``end``. With ``chunk`` binds are
    reported as the runner reports them: a chunk's binds before the clock moves over it."""
    ex = _executor(bound)
    c = ex.collection = Collection(ex, "measured", [NS], None)
    if chunk is None:
        for t in binds:
            ex.clock.advance_to(t)
            c.on_bound(_pod(), None, t)
    else:
        k = 0
        while k * chunk < end:
            lo, hi = k * chunk, min((k + 1) * chunk, end)
            for t in binds:
                if lo <= t < hi:
                    c.on_bound(_pod(), None, t)
            ex.clock.advance_to(hi)
            k += 1
    ex.clock.advance_to(end)
    ex._stop_collecting()
    return ex


def _throughput(ex: _Executor) -> dict | None:
    items = [i for i in ex.result.data_items if i.labels.get("Metric") == "SchedulingThroughput"]
    assert len(items) <= 1
    return items[0].data if items else None


def _assert_no_sample(ex: _Executor) -> None:
    r = ex.result
    assert _throughput(ex) is None and r.measured is None and r.ratio is None
    assert r.no_throughput_sample and r.phases[0].throughput_samples == 0
    # upstream's item without data, its warning, and no threshold error (applyThreshold finds no item)
    (empty,) = [i for i in r.data_items if "Metric" not in i.labels]
    assert empty.data is None and empty.labels == {"Name": "Case/w/measured"}
    assert any(w.startswith("Failed to measure SchedulingThroughput for Case/w/measured") for w in r.warnings)
    assert r.threshold_errors == []


def test_a_half_second_phase_has_no_sample():
    ex = _run(_spread([400])[:200], 0.5)  # 200 pods in (0, 0.5): no tick at all
    _assert_no_sample(ex)
    assert ex.result.phases[0].pods_scheduled == 200


def test_a_phase_of_one_and_a_half_seconds_has_no_sample():
    # the tick at 1 s starts sampling and is discarded; the 0.5 s after it are dropped at the end
    ex = _run(_spread([1000, 1000])[:1500], 1.5)
    _assert_no_sample(ex)


def test_three_seconds_discard_the_first_tick_and_drop_the_end():
    # 50 pods in the first second (discarded), 200 and 400 in the next two, 100 after the last
    # tick (the phase ends mid-tick, at 3.5 s: dropped)
    ex = _run(_spread([50, 200, 400, 200])[:750], 3.5)
    data = _throughput(ex)
    assert data is not None and ex.result.phases[0].throughput_samples == 2
    assert data["Average"] == 300.0 and ex.result.measured == 300.0
    assert (data["Perc50"], data["Perc90"], data["Perc95"], data["Perc99"]) == (200.0, 400.0, 400.0, 400.0)
    assert ex.result.ratio == 3.0 and not ex.result.no_throughput_sample


def test_ten_samples_merge_an_idle_tick_and_take_upstreams_percentile_indices():
    counts = [30, 100, 200, 0, 300, 150, 150, 50, 400, 250, 120, 120]
    ex = _run(_spread(counts)[:sum(counts[:11]) + 60], 11.5)
    data = _throughput(ex)
    # kept: 100, 200, then 300 pods over the two seconds (3, 5]: 150 twice, 150, 150, 50, 400, 250, 120
    assert ex.result.phases[0].throughput_samples == 10
    assert data is not None and data["Average"] == 172.0
    # sorted 50 100 120 150 150 150 150 200 250 400: index ceil(n*p/100)-1 = 4, 8, 9, 9
    assert (data["Perc50"], data["Perc90"], data["Perc95"], data["Perc99"]) == (150.0, 250.0, 400.0, 400.0)


def test_a_tick_counts_the_binds_up_to_its_time_not_the_whole_chunk():
    # the runner reports a chunk's binds before the clock moves over it: with 0.3 s chunks the
    # binds in (2.0, 2.1) are reported before the tick at 2.0 runs, and must not count for it
    counts = [50, 200, 400, 200]
    exact = _throughput(_run(_spread(counts)[:750], 3.5))
    chunked = _throughput(_run(_spread(counts)[:750], 3.5, chunk=0.3))
    assert exact is not None and chunked == exact


def test_pods_already_bound_in_the_namespace_start_sampling_at_the_first_tick():
    # upstream's handler gets an Add event per pod already in the informer: 5 bound pods make the
    # first tick (no new bind yet) the discarded one, so (1, 2] is a sample
    counts = [0, 100, 300]
    binds = _spread(counts)
    ex = _run(binds, 3.5, bound=tuple(_pod() for _ in range(5)) + (_pod(node=""), _pod(ns="other")))
    data = _throughput(ex)
    assert data is not None and ex.result.phases[0].throughput_samples == 2
    assert data["Average"] == 200.0 and ex.result.phases[0].pods_scheduled == 400
    # without them the tick at 2 s would be the discarded one
    ex = _run(binds, 3.5)
    assert _throughput(ex) == {"Average": 300.0, "Perc50": 300.0, "Perc90": 300.0, "Perc95": 300.0,
                               "Perc99": 300.0, "AverageThreshold": 100.0}


def test_the_wait_polls_every_second_so_a_tick_before_the_poll_samples_the_last_binds():
    # pods are created until 0.555 s, then bind one per 10 ms: the last at 1.855 s. Upstream's wait
    # polls at 0.555, 1.555, 2.555: the tick at 2.0 comes first and keeps (1.0, 1.855]'s 86 pods as
    # a sample over the whole second; the collection is cancelled at the poll, 2.555 s. (fastsched's
    # wait returns at 1.855 s, the scheduler does not run on; the collection takes the tick.)
    ex = _executor()
    ex.clock.advance_to(0.555)
    c = ex.collection = Collection(ex, "measured", [NS], None)
    c.t0 = 0.0  # the collection started with the pods' creation
    c.timer.stop()
    c.timer = ex.clock.schedule(1.0, c._tick, c.timer.priority)
    bound = [0]

    def step() -> bool:
        if bound[0] == 130:
            return False
        bound[0] += 1
        at = 0.555 + 0.01 * bound[0]
        c.on_bound(_pod(), None, at)
        ex.clock.advance_to(at)
        return True

    ex._step = step
    ex._wait(lambda: bound[0] >= 130, "130 pods", poll=True)
    assert ex.clock.now() == pytest.approx(1.855) and c.poll_end == pytest.approx(2.555)
    ex._stop_collecting()
    data = _throughput(ex)
    assert data is not None and data["Average"] == 86.0 and ex.result.phases[0].throughput_samples == 1
