import threading

import pytest

from fastsched.framework import ParallelError, Parallelizer, chunk_size_for
from fastsched.framework.parallelize import chunk_bounds


@pytest.mark.parametrize("n,parallelism,want", [
    # upstream parallelism_test.go: chunk = min(sqrt(n), n/parallelism + 1), at least 1
    (0, 16, 1), (1, 16, 1), (10, 16, 1), (100, 16, 7), (1000, 16, 31), (5000, 16, 70),
    (1_000_000, 16, 1000), (1000, 10, 31), (1000, 100, 11), (50, 1, 7),
])
def test_chunk_size_for(n, parallelism, want):
    assert chunk_size_for(n, parallelism) == want


def test_chunk_bounds_cover_every_piece_once():
    for n in (0, 1, 7, 100, 5001):
        bounds = chunk_bounds(n, 16)
        covered = [i for s, e in bounds for i in range(s, e)]
        assert covered == list(range(n))


def test_until_runs_every_piece():
    seen = []
    Parallelizer(16).until(50, seen.append)
    assert seen == list(range(50))


def test_until_stops_at_first_error():
    seen = []

    def work(i):
        if i in (13, 40):
            raise ValueError(f"bad {i}")
        seen.append(i)

    with pytest.raises(ParallelError) as ei:
        Parallelizer(16).until(50, work)
    assert ei.value.piece == 13
    assert isinstance(ei.value.error, ValueError) and str(ei.value.error) == "bad 13"
    assert seen == list(range(13))


def test_until_chunks_reports_lowest_failing_chunk_and_cancels_later_ones():
    par = Parallelizer(16, max_threads=2)
    n = 10_000  # 100 chunks of 100
    ran = []
    lock = threading.Lock()

    def chunk(start, end):
        with lock:
            ran.append(start)
        if start in (3000, 7000):
            raise RuntimeError(f"chunk {start}")
        return end - start

    with pytest.raises(ParallelError) as ei:
        par.until_chunks(n, chunk)
    assert ei.value.piece == 3000
    assert str(ei.value.error) == "chunk 3000"
    # every chunk before the failing one ran; none far after it started
    assert set(range(0, 3000, 100)) <= set(ran)
    assert max(ran) < 7000


def test_until_chunks_results_in_order_threaded_and_inline():
    for threads in (1, 2):
        par = Parallelizer(16, max_threads=threads)
        out = par.until_chunks(1000, lambda s, e: (s, e))
        assert out == chunk_bounds(1000, 16)


def test_parallelism_must_be_positive():
    with pytest.raises(ValueError):
        Parallelizer(0)
