"""The metrics recorder: durations buffered in C arrays and folded, equal to per-call recording."""
import random
import threading

import pytest

from fastsched.runtime import metrics as metrics_mod
from fastsched.runtime.metrics import DurationStats, MetricsRecorder


def _durations(n, seed=0):
    rng = random.Random(seed)
    # a wide spread of magnitudes, so that the order of the additions shows in the float total
    return [rng.random() * 10 ** rng.randint(-9, 2) for _ in range(n)]


@pytest.mark.parametrize("fold_every", [1, 3, 4096])
def test_folded_stats_equal_observing_one_at_a_time(monkeypatch, fold_every):
    monkeypatch.setattr(metrics_mod, "FOLD_EVERY", fold_every)
    rec = MetricsRecorder()
    reference: dict = {}
    rng = random.Random(1)
    for i, d in enumerate(_durations(10_000)):
        point, code = rng.choice(["Reserve", "Bind"]), rng.choice(["Success", "Error"])
        rec.observe_extension_point(point, code, "p", d)
        reference.setdefault((point, code, "p"), DurationStats()).observe(d)
        if i == 5000:
            rec.snapshot()  # a read in the middle folds what is pending; nothing changes
    got = rec.extension_point_duration
    assert got.keys() == reference.keys()
    for key, st in reference.items():
        # bit for bit: count, total (same order of additions), min and max
        assert (got[key].count, got[key].total, got[key].min, got[key].max) == (st.count, st.total, st.min, st.max)


def test_series_handed_out_and_observe_methods_feed_the_same_stats():
    rec = MetricsRecorder()
    series = rec.extension_point_series("Permit", "Success", "p")
    series.observe(1.0)
    rec.observe_extension_point("Permit", "Success", "p", 3.0)
    rec.plugin_series("Score", "A", "Success").observe(2.0)
    rec.observe_plugin("Score", "A", "Success", 4.0)
    st = rec.extension_point_duration[("Permit", "Success", "p")]
    assert (st.count, st.total, st.min, st.max, st.mean) == (2, 4.0, 1.0, 3.0, 2.0)
    pst = rec.plugin_execution_duration[("Score", "A", "Success")]
    assert (pst.count, pst.total) == (2, 6.0)


def test_snapshot_shape_and_reset_keeps_handed_out_series_working():
    rec = MetricsRecorder()
    series = rec.extension_point_series("Bind", "Success", "p")
    series.observe(0.5)
    rec.observe_plugin("Bind", "DefaultBinder", "Success", 0.25)
    snap = rec.snapshot()
    assert snap["extension_point_duration"] == [
        {"extension_point": "Bind", "status": "Success", "profile": "p", "count": 1, "total_seconds": 0.5,
         "mean_seconds": 0.5, "min_seconds": 0.5, "max_seconds": 0.5}]
    assert snap["plugin_execution_duration"][0]["plugin"] == "DefaultBinder"
    rec.reset()
    assert rec.snapshot() == {"extension_point_duration": [], "plugin_execution_duration": []}
    assert rec.extension_point_duration == {}
    series.observe(2.0)  # a series kept across reset() still records
    assert rec.extension_point_duration[("Bind", "Success", "p")].count == 1


def test_concurrent_observations_are_all_counted(monkeypatch):
    monkeypatch.setattr(metrics_mod, "FOLD_EVERY", 7)  # fold often, while other threads append
    rec = MetricsRecorder()
    n_threads, per_thread = 8, 5000

    def work():
        series = rec.plugin_series("Score", "A", "Success")
        for _ in range(per_thread):
            series.observe(1.0)
            rec.observe_plugin("Filter", "A", "Success", 2.0)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for _ in range(50):
        rec.snapshot()  # reads fold concurrently with the appends
    for t in threads:
        t.join()
    stats = rec.plugin_execution_duration
    assert stats[("Score", "A", "Success")].count == n_threads * per_thread
    assert stats[("Score", "A", "Success")].total == float(n_threads * per_thread)
    assert stats[("Filter", "A", "Success")].count == n_threads * per_thread


def test_a_scheduler_run_records_the_binding_points():
    from fastsched import Scheduler
    from fastsched.testing import make_node, make_pod

    s = Scheduler(seed=0)
    s.add_nodes([make_node("n1", cpu="4", memory="8Gi")])
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(12)])
    assert all(r.scheduled for r in s.run())
    points = {(p, c): st.count for (p, c, prof), st in s.metrics.framework.extension_point_duration.items()}
    for point in ("Reserve", "Permit", "PreBind", "Bind"):
        assert points[(point, "Success")] == 12
    sampled = {p for (p, pl, c) in s.metrics.framework.plugin_execution_duration}
    assert {"Reserve", "Bind"} <= sampled  # the sampled cycle times each plugin too
    # but no PreBind plugin: with NominatedNodeNameForExpectation their pre-flights answered Skip
    # (no claims), and RunPreBindPlugins runs no plugin its pre-flight skipped
    assert "PreBind" not in sampled
