"""Status codes and the Status type (upstream ``k8s.io/kube-scheduler/framework`` interface.go).

A ``None`` status means Success everywhere, as a nil ``*Status`` does upstream; the module-level
helpers (:func:`code_of`, :func:`is_success`, ...) accept ``None`` for that reason.
"""
from __future__ import annotations
from ..errors import FastschedError


import enum
from typing import Iterable


class Code(enum.IntEnum):
    """Status codes, in upstream's order; ``str()`` gives upstream's names."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

#: The codes upstream's ``IsRejected`` accepts.
REJECTED_CODES = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})

MIN_NODE_SCORE = 0
MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2**63 - 1


class StatusError(FastschedError):
    """The error a non-success Status converts to (``Status.as_error``)."""

    def __init__(self, message: str, status: "Status | None" = None):
        super().__init__(message)
        self.status = status


class Status:
    """The result of running a plugin: a code, reasons, an optional wrapped error, the failing plugin.

    Mirrors upstream's ``*Status``; use ``None`` for Success where upstream returns nil.
    """

    __slots__ = ("_code", "_reasons", "_err", "_plugin")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, err: BaseException | None = None,
                 plugin: str = ""):
        self._code = code if type(code) is Code else Code(code)
        self._reasons = [str(r) for r in reasons] if reasons else []
        self._err = err
        self._plugin = plugin

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_error(cls, err: BaseException | str) -> "Status":
        """An Error status wrapping ``err`` (upstream ``AsStatus``; see :func:`as_status` for None)."""
        if isinstance(err, str):
            err = StatusError(err)
        return cls(Code.ERROR, err=err)

    # -- accessors ----------------------------------------------------------------------------
    def code(self) -> Code:
        return self._code

    def reasons(self) -> list[str]:
        """The reasons, with the wrapped error's text first when there is one."""
        if self._err is not None:
            return [str(self._err), *self._reasons]
        return list(self._reasons)

    def message(self) -> str:
        return ", ".join(self.reasons())

    def plugin(self) -> str:
        return self._plugin

    def err(self) -> BaseException | None:
        return self._err

    # -- mutators (upstream mutates in place and returns the receiver) -------------------------
    def set_plugin(self, plugin: str) -> None:
        self._plugin = plugin

    def with_plugin(self, plugin: str) -> "Status":
        self._plugin = plugin
        return self

    def with_error(self, err: BaseException) -> "Status":
        self._err = err
        return self

    def append_reason(self, reason: str) -> None:
        self._reasons.append(reason)

    def copy(self) -> "Status":
        """A new, independent Status with the same code, reasons, error and plugin."""
        c = Status.__new__(Status)
        c._code, c._reasons, c._err, c._plugin = self._code, list(self._reasons), self._err, self._plugin
        return c

    # -- predicates ---------------------------------------------------------------------------
    def is_success(self) -> bool:
        return self._code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self._code == Code.WAIT

    def is_skip(self) -> bool:
        return self._code == Code.SKIP

    def is_rejected(self) -> bool:
        return self._code in REJECTED_CODES

    def as_error(self) -> BaseException | None:
        """None for Success, Wait and Skip; else the wrapped error, or one carrying ``message()``."""
        if self._code in (Code.SUCCESS, Code.WAIT, Code.SKIP):
            return None
        if self._err is not None:
            return self._err
        return StatusError(self.message(), self)

    # -- value semantics ------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if other is None:
            return self._code == Code.SUCCESS and not self._reasons and self._err is None
        if not isinstance(other, Status):
            return NotImplemented
        if self._code != other._code or self._reasons != other._reasons or self._plugin != other._plugin:
            return False
        if self._err is None or other._err is None:
            return self._err is other._err
        return type(self._err) is type(other._err) and str(self._err) == str(other._err)

    # mutable, like upstream's pointer: unhashable (the documented idiom; typeshed types
    # object.__hash__ as a method, hence the ignore)
    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return self.message()

    def __repr__(self) -> str:
        parts = [f"code={self._code}"]
        if self._reasons or self._err is not None:
            parts.append(f"message={self.message()!r}")
        if self._plugin:
            parts.append(f"plugin={self._plugin!r}")
        return f"Status({', '.join(parts)})"


class SharedStatus(Status):
    """A Status shared by every caller (:data:`SUCCESS`, :data:`SKIP`): it must never change.

    ``with_plugin`` and ``with_error`` return a changed copy instead of the receiver (callers of
    those use the returned value); ``set_plugin`` and ``append_reason``, which return nothing,
    raise :class:`SharedStatusError`: a copy would be lost, and changing the shared one would
    change it for everyone. ``copy()`` gives a Status that may be changed.
    """

    __slots__ = ()

    def set_plugin(self, plugin: str) -> None:
        raise SharedStatusError(f"{self!r} is shared: set_plugin on a copy() of it")

    def append_reason(self, reason: str) -> None:
        raise SharedStatusError(f"{self!r} is shared: append_reason on a copy() of it")

    def with_plugin(self, plugin: str) -> Status:
        return self.copy().with_plugin(plugin)

    def with_error(self, err: BaseException) -> Status:
        return self.copy().with_error(err)

    def __copy__(self) -> Status:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> Status:
        return self.copy()


class SharedStatusError(FastschedError, TypeError):
    """An attempt to change a :class:`SharedStatus` in place."""


def _shared(code: Code) -> SharedStatus:
    s = SharedStatus.__new__(SharedStatus)
    s._code, s._reasons, s._err, s._plugin = code, [], None, ""  # reasons() hands out copies only
    return s


#: A Success status shared by all (where a non-None Success is wanted; None means Success too).
SUCCESS: Status = _shared(Code.SUCCESS)
#: A Skip status without reasons, shared by all: what ``Status(Code.SKIP)`` makes, without the
#: allocation (PreFilter, PreScore, PreBindPreFlight and Bind answer Skip on most cycles).
SKIP: Status = _shared(Code.SKIP)


# -- nil-tolerant helpers (a None status is Success) ------------------------------------------------
def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code()


def is_success(status: Status | None) -> bool:
    return status is None or status.is_success()


def is_skip(status: Status | None) -> bool:
    return status is not None and status.is_skip()


def is_wait(status: Status | None) -> bool:
    return status is not None and status.is_wait()


def is_rejected(status: Status | None) -> bool:
    return status is not None and status.is_rejected()


def message_of(status: Status | None) -> str:
    return "" if status is None else status.message()


def as_status(err: BaseException | str | None) -> Status | None:
    """An Error status for ``err``, or None when ``err`` is None (upstream ``AsStatus``)."""
    if err is None:
        return None
    return Status.from_error(err)


def new_status(code: Code, *reasons: str) -> Status:
    """Upstream ``NewStatus``."""
    return Status(code, *reasons)


def statuses_reasons(statuses: Iterable[Status | None]) -> list[str]:
    """All reasons of several statuses, in order (used when merging per-plugin statuses)."""
    out: list[str] = []
    for s in statuses:
        if s is not None:
            out.extend(s.reasons())
    return out
