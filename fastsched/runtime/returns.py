"""Checks of what plugins return, made where a return value crosses into the framework.

Upstream's Go compiler guarantees that a Filter returns a ``*Status`` and a Score an ``int64``;
Python does not, so the framework checks every return value before reading it. A value of the wrong
kind becomes an Error status (code ``Error``) with one wording everywhere::

    plugin "<name>" returned <value> from <Point>: expected <what was expected>

``<value>`` is the ``repr`` of what the plugin returned (long values shortened, NumPy arrays shown
as ``ndarray(shape=..., dtype=...)``); ``<Point>`` is the extension point (``Filter``, ``Score``,
``NormalizeScore``, ``Permit``...), followed by the method name for the vectorized methods
(``Filter (filter_vectorized)``). That status then takes the same road as an Error the plugin returned
itself, so the framework's usual wrapping comes in front of it, as upstream wraps plugin errors,
e.g. ``running "F" filter plugin: plugin "F" returned 'ok' from Filter: expected a Status or None``.

The checks cost one ``type(x) is T`` test on the common path; everything else happens only once
something is already wrong.
"""
from __future__ import annotations

import datetime
import math
import reprlib
from typing import Any, overload

import numpy as np

from ..framework.vectorized import FilterVerdicts
from ..framework.status import Status, StatusError
from ..util.field import go_quote

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# What each kind of extension point accepts (the "expected ..." part of the message).
EXPECT_STATUS = "a Status or None"
EXPECT_SCORE = "an (int, Status or None) pair"
EXPECT_PRE_FILTER = "a (PreFilterResult or None, Status or None) pair"
EXPECT_POST_FILTER = "a (PostFilterResult or None, Status or None) pair"
EXPECT_PERMIT = "a (Status or None, timeout in seconds) pair"
EXPECT_PERMIT_WAIT = "a (Status or None, timeout in seconds) pair with a real-number timeout"
EXPECT_SCORE_VECTORIZED = "an (integer ndarray with one score per node, Status or None) pair"
EXPECT_NORMALIZE = "an int score (in int64) for every node it was given"

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 80
_short.maxlist = _short.maxtuple = _short.maxdict = _short.maxset = 6


def describe(value: Any) -> str:
    """A short ``repr`` of a returned value for messages (arrays by shape and dtype)."""
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, FilterVerdicts):
        return (f"FilterVerdicts(codes={describe(value.codes)}, reason_ids={describe(value.reason_ids)}, "
                f"reasons={describe(value.reasons)})")
    if type(value) is tuple:
        inner = ", ".join(describe(v) for v in value[:6]) + (", ..." if len(value) > 6 else "")
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    try:
        return _short.repr(value)
    except Exception:  # noqa: BLE001 - a plugin's own __repr__ may fail too
        return f"<{type(value).__name__} object>"


def bad_return(name: str, point: str, value: Any, expected: str) -> Status:
    """The Error status for a return value of the wrong kind (see the module docstring)."""
    return Status.from_error(StatusError(
        f"plugin {go_quote(name)} returned {describe(value)} from {point}: expected {expected}"))


@overload
def checked_status(s: None, name: str, point: str, value: Any = None) -> None: ...


@overload
def checked_status(s: object, name: str, point: str, value: Any = None) -> Status: ...


def checked_status(s: Any, name: str, point: str, value: Any = None) -> Status | None:
    """``s`` when it is None or a Status, else the Error status naming ``value`` (default ``s``)."""
    if s is None or isinstance(s, Status):
        return s
    return bad_return(name, point, s if value is None else value, EXPECT_STATUS)


def as_int64(v: Any) -> int | None:
    """``v`` as a Python int when it is an integer (Python or NumPy, not bool) within int64; else None."""
    if type(v) is int:
        return v if INT64_MIN <= v <= INT64_MAX else None
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        v = int(v)
        return v if INT64_MIN <= v <= INT64_MAX else None
    return None


def as_timeout(t: Any) -> float | None:
    """A Permit timeout in seconds: a real number (or timedelta), not NaN; None when invalid.

    A negative timeout is valid: upstream's ``time.AfterFunc`` with a negative duration fires at
    once, so the pod is rejected by the timeout straight away (``rejected due to timeout after
    waiting -5s at plugin P``). ``inf`` is accepted (the framework caps waits at 15 minutes), and
    ``-inf`` too (a rejection at once, shown as Go's shortest Duration); NaN, bools, strings and
    None are not.
    """
    if isinstance(t, datetime.timedelta):
        t = t.total_seconds()
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
        return None
    try:
        f = float(t)
    except OverflowError:  # an int past a float's range: as far as a Duration goes either way
        f = math.inf if t > 0 else -math.inf
    if math.isnan(f):
        return None
    return f


def int_score_array(sc: Any, n: int) -> np.ndarray | None:
    """``sc`` when it is an integer ndarray of shape ``(n,)`` whose values fit int64, else None."""
    if type(sc) is not np.ndarray and not isinstance(sc, np.ndarray):
        return None
    if sc.shape != (n,):
        return None
    kind = sc.dtype.kind
    if kind == "i":
        return sc
    if kind == "u":
        if n and sc.dtype.itemsize == 8 and int(sc.max()) > INT64_MAX:
            return None
        return sc
    return None
