"""Parallelizer (upstream ``pkg/scheduler/framework/parallelize``).

Work is split into chunks with upstream's chunk-size rule (:func:`chunk_size_for`). The first
failing piece cancels the chunks after it. Unlike upstream, which piece counts as "first" is
deterministic: chunks before a failing one always complete, so the error reported is the one of the
lowest failing piece — what upstream reports when it runs with parallelism 1.

Python-level work holds the GIL, so :meth:`Parallelizer.until` runs its chunks on the calling
thread; :meth:`Parallelizer.until_chunks` hands whole chunks to a thread pool and is meant for
kernels that release the GIL (``fastsched._kernels``).
"""
from __future__ import annotations
from ..errors import FastschedError


import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

DEFAULT_PARALLELISM = 16


def chunk_size_for(n: int, parallelism: int) -> int:
    """Upstream ``chunkSizeFor``: ``min(floor(sqrt(n)), n // parallelism + 1)``, at least 1."""
    s = int(math.sqrt(n))
    r = n // parallelism + 1
    if s > r:
        s = r
    return max(s, 1)


def chunk_bounds(n: int, parallelism: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` ranges Until would hand to its workers for ``n`` pieces."""
    size = chunk_size_for(n, parallelism)
    return [(start, min(start + size, n)) for start in range(0, n, size)]


class ParallelError(FastschedError):
    """Carries the failing piece index beside the original exception (``__cause__``)."""

    def __init__(self, piece: int, error: BaseException):
        super().__init__(str(error))
        self.piece = piece
        self.error = error


_POOL_LOCK = threading.Lock()
_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    with _POOL_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fastsched-par")
            _POOLS[workers] = pool
        return pool


class Parallelizer:
    """Runs ``pieces`` units of work in chunks, as upstream's ``Parallelizer.Until``.

    ``parallelism`` follows the configuration (upstream default 16) and decides the chunk size;
    the OS threads used by :meth:`until_chunks` are ``min(parallelism, cpu count)``.
    """

    def __init__(self, parallelism: int = DEFAULT_PARALLELISM, *, max_threads: int | None = None):
        if parallelism <= 0:
            raise ValueError(f"parallelism should be an integer value greater than zero, got {parallelism}")
        self.parallelism = parallelism
        cpus = os.cpu_count() or 1
        self.threads = max(1, min(parallelism, max_threads if max_threads else cpus))

    def chunks(self, pieces: int) -> list[tuple[int, int]]:
        return chunk_bounds(pieces, self.parallelism)

    def until(self, pieces: int, do_work_piece: Callable[[int], None], operation: str = "") -> None:
        """Call ``do_work_piece(i)`` for ``i in range(pieces)``, chunk by chunk.

        The first exception stops the remaining pieces and is re-raised as :class:`ParallelError`
        (``.piece`` is the failing index, ``.error`` the original exception).
        """
        for start, end in self.chunks(pieces):
            for i in range(start, end):
                try:
                    do_work_piece(i)
                except Exception as e:  # noqa: BLE001 - re-raised with its piece index
                    raise ParallelError(i, e) from e

    def until_chunks(self, pieces: int, do_chunk: Callable[[int, int], object],
                     operation: str = "") -> list[object]:
        """Call ``do_chunk(start, end)`` for each chunk, on up to ``self.threads`` threads.

        ``do_chunk`` returns a result, or raises to fail: chunks after the lowest failing one are
        cancelled, and that failure is re-raised (:class:`ParallelError` with ``piece`` = chunk start).
        Returns the chunk results in chunk order.
        """
        bounds = self.chunks(pieces)
        if not bounds:
            return []
        if self.threads == 1 or len(bounds) == 1:
            out = []
            for start, end in bounds:
                try:
                    out.append(do_chunk(start, end))
                except Exception as e:  # noqa: BLE001
                    raise ParallelError(start, e) from e
            return out

        results: list[object] = [None] * len(bounds)
        errors: dict[int, BaseException] = {}
        first_failed = [len(bounds)]  # lowest failing chunk index so far
        lock = threading.Lock()
        next_chunk = [0]

        def worker() -> None:
            while True:
                with lock:
                    k = next_chunk[0]
                    if k >= len(bounds) or k > first_failed[0]:
                        return
                    next_chunk[0] = k + 1
                start, end = bounds[k]
                try:
                    results[k] = do_chunk(start, end)
                except Exception as e:  # noqa: BLE001
                    with lock:
                        errors[k] = e
                        if k < first_failed[0]:
                            first_failed[0] = k

        n_workers = min(self.threads, len(bounds))
        pool = _pool(self.threads)
        futures = [pool.submit(worker) for _ in range(n_workers - 1)]
        worker()  # the calling thread works too
        for f in futures:
            f.result()
        if errors:
            k = min(errors)
            raise ParallelError(bounds[k][0], errors[k]) from errors[k]
        return results
