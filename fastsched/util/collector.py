"""The cyclic garbage collector paused around bulk work that creates no reference cycles.

Loading 100,000 objects, adding a million nodes or pods, copying a scheduler's state for a fork:
each allocates many tracked objects and none in a cycle, yet every allocation counts toward the
collector's next pass, and its passes over the growing heap cost about as much as the work itself.
:func:`collector_paused` turns it off for the block and back on (only if it was on) afterwards.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """``with collector_paused(): ...``: the block runs with the cyclic collector off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
