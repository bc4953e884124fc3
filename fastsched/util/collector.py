"""The cyclic garbage collector paused around bulk work that creates no reference cycles.

Loading 100,000 objects, adding a million nodes or pods, copying a scheduler's state for a fork:
each allocates many tracked objects and none in a cycle, yet every allocation counts toward the
collector's next pass, and its passes over the growing heap cost about as much as the work itself.
:func:`collector_paused` turns it off for the block and back on (only if it was on) afterwards.
On the way out of a block that made many objects it also hands them to the old generation
without a pass (:func:`promote_young`): the block's allocations still count toward the next young pass, which
would otherwise start at the first allocation after the block and traverse every object the block
made (7 a pod after ``add_pods``: ~2 µs a pod at 5,000 nodes), then again in the middle
generation's pass, only to keep them all.

The scheduling loop is milder: its short-lived cycles (a caught exception's frames, a cycle's
state) die young and the young generations' passes, which stay on, take them; but each bound pod
leaves objects that live on (the bound copy, its records), so the heap keeps growing by the 25%
that starts a pass over the *whole* heap, 14 times in 50,000 pods of a gang workload (a third of
the run). :func:`full_collections_deferred` leaves the young passes on and defers the full ones;
the loop runs one itself every :data:`FULL_COLLECTION_EVERY` attempts, so that what does escape
into the old generation is still bounded.
"""
from __future__ import annotations

import contextlib
import gc
import sysconfig
import threading
from typing import Iterator

__all__ = ["FULL_COLLECTION_EVERY", "collector_paused", "full_collections_deferred", "promote_young"]

#: a paused block that leaves this many times the young generation's threshold of new tracked
#: objects hands them to the old generation on its way out (see promote_young)
PROMOTE_AFTER = 2
#: whether freeze and unfreeze splice lists (constant time): a free-threaded build's visit every
#: object of the heap, with the world stopped, so it keeps the young pass
_SPLICED_FREEZE = not sysconfig.get_config_var("Py_GIL_DISABLED")
#: scheduling attempts between the loop's own full collections (while they are deferred)
FULL_COLLECTION_EVERY = 100_000

# (threshold2 so high that the old generation's pass never starts by itself: it counts young passes)
_NEVER = 1 << 30
_deferred_lock = threading.Lock()
_deferred_depth = 0
_saved_threshold: tuple[int, ...] | None = None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """``with collector_paused(): ...``: the block runs with the cyclic collector off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            young = gc.get_threshold()[0]
            # only after a bulk block (the loader's of 3,000 pods leaves ~3,000): then the young
            # objects from before it (fewer than a young pass's threshold) are a small part of what
            # moves, so the garbage that waits for a full pass instead of a young one is bounded
            if _SPLICED_FREEZE and young and gc.get_count()[0] >= PROMOTE_AFTER * young:
                promote_young()
            gc.enable()


def promote_young() -> None:
    """Move every object of the young and middle generations to the old one, without a pass.

    ``gc.freeze()`` then ``gc.unfreeze()``: both splice the generations' lists (constant time) and
    the first resets the young generation's allocation count, so no young pass is due. Nothing is
    lost: a cycle among the moved objects is collected by the next full pass (the old generation's
    objects are traversed there as before). Skipped when something is frozen already (a server
    that froze its start-up heap): ``unfreeze`` would thaw that too. (Another thread freezing
    between the two calls would see its objects thawed: freezing is a start-up step, done before
    threads schedule.)"""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


@contextlib.contextmanager
def full_collections_deferred() -> Iterator[None]:
    """``with full_collections_deferred(): ...``: the block runs with the collector's passes over
    the old generation deferred (the young ones as usual); the thresholds as they were after the
    outermost block (blocks may nest, and run on several threads)."""
    global _deferred_depth, _saved_threshold
    with _deferred_lock:
        if _deferred_depth == 0:
            _saved_threshold = gc.get_threshold()
            gc.set_threshold(_saved_threshold[0], _saved_threshold[1], _NEVER)
        _deferred_depth += 1
    try:
        yield
    finally:
        with _deferred_lock:
            _deferred_depth -= 1
            if _deferred_depth == 0 and _saved_threshold is not None:
                gc.set_threshold(*_saved_threshold)
                _saved_threshold = None
