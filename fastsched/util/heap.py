"""Returning the C heap's free pages to the system after bulk work.

A bulk add of nodes or pods (``Scheduler.add_nodes`` / ``add_pods`` of a large batch) allocates and
frees large transient buffers: the batch's lists and index arrays, and the table's old columns when
it grows (each growth allocates every column anew and frees the old one). glibc's ``malloc`` takes
buffers below its mmap threshold from its heap, and that threshold rises to the size of the largest
mmapped buffer freed so far (up to 32 MiB), so once the table's columns reach a few MiB their old
copies and the transients become free chunks in the middle of the heap. glibc gives back only
the free memory at the heap's top by itself; the rest stays resident until ``malloc_trim``, which
releases every whole free page (``MADV_DONTNEED``) and keeps the chunks usable. At 1,000,000 nodes
and as many pods added 100,000 at a time that was ~65 MiB of a ~840 MiB resident set.

:func:`release_free_heap` calls ``malloc_trim(0)`` where the C library has it (glibc) and does
nothing elsewhere (musl, macOS, Windows). It costs a walk over the heap's free chunks (a few ms at
a million nodes), so callers use it after batches of at least :data:`RELEASE_AFTER` objects only.
Python's own allocator (pymalloc: objects up to 512 bytes, in 1 MiB arenas) is not the C heap and
is not affected: an arena goes back to the system only once every object in it is freed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Callable

__all__ = ["RELEASE_AFTER", "release_free_heap"]

#: the batch size (objects added in one call) from which a bulk add releases the free heap after
#: itself; below it the transients are small and the walk not worth it
RELEASE_AFTER = 20_000


def _find_malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (or no C library found): nothing to call
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_malloc_trim = _find_malloc_trim()


def release_free_heap() -> bool:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim(0)``); returns
    whether the C library offers that (False: nothing was done)."""
    if _malloc_trim is None:
        return False
    _malloc_trim(0)
    return True
