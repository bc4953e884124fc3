"""Errors raised while reading Kubernetes manifests."""
from __future__ import annotations

import os
import sys
import warnings
from types import FrameType

from ..errors import LocatedError

__all__ = ["ManifestError", "ManifestWarning", "QuantityError"]


class ManifestError(LocatedError, ValueError):
    """A manifest is malformed.

    ``path`` is the field path of the offending value (``spec.containers[0].resources.requests.cpu``),
    ``reason`` says what is wrong with it and ``source`` names the document it came from
    (``Pod default/web``, ``document 3``); the message joins the three with ``": "``
    (:func:`fastsched.errors.located`). A :class:`~fastsched.errors.FastschedError` and a
    ``ValueError``; :meth:`with_source` and :meth:`nested_under` come from
    :class:`~fastsched.errors.LocatedError`.
    """

    def __init__(self, reason: str, path: str | None = None, source: str | None = None):
        super().__init__(reason, path, source)

    def with_source(self, source: str) -> "ManifestError":
        """A copy of this error whose message is prefixed by ``source`` (outermost first)."""
        return super().with_source(source)

    def nested_under(self, prefix: str) -> "ManifestError":
        """A copy whose path is nested under ``prefix``: ``name`` under ``spec.containers[0]``
        becomes ``spec.containers[0].name``. Lets parsers report paths relative to their input
        and build the full path only when an error actually happens."""
        return super().nested_under(prefix)

    def __reduce__(self):
        return (_rebuild_error, (type(self), self.reason, self.path, self.source))


class ManifestWarning(UserWarning):
    """Something in the input was dropped or read leniently: an unknown field, a field name that
    matched only case-insensitively, objects of kinds fastsched does not model, a pod bound to a
    node that does not exist. ``warnings.simplefilter("error", ManifestWarning)`` makes them fatal."""


def warn_manifest(message: str) -> None:
    """Issue a :class:`ManifestWarning` attributed to the first caller outside fastsched (the
    user's ``Scheduler.add(...)`` line, not the loader's internals)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame: FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(ManifestWarning(message), stacklevel=level)


class QuantityError(ManifestError):
    """A resource quantity does not follow the Kubernetes quantity grammar."""


def _rebuild_error(cls, reason, path, source):
    return cls(reason, path, source)
