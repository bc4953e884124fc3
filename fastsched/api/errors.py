"""Errors raised while reading Kubernetes manifests."""
from __future__ import annotations

import copy

__all__ = ["ManifestError", "ManifestWarning", "QuantityError"]


class ManifestError(ValueError):
    """A manifest is malformed.

    ``path`` is the field path of the offending value (``spec.containers[0].resources.requests.cpu``),
    ``reason`` says what is wrong with it and ``source`` names the document it came from
    (``Pod default/web``, ``document 3``); the message joins the three with ``": "``.
    """

    def __init__(self, reason: str, path: str | None = None, source: str | None = None):
        self.reason = reason
        self.path = path or None
        self.source = source or None
        super().__init__(self._compose())

    def _compose(self) -> str:
        parts = [part for part in (self.source, self.path) if part]
        parts.append(self.reason)
        return ": ".join(parts)

    def with_source(self, source: str) -> "ManifestError":
        """A copy of this error whose message is prefixed by ``source`` (outermost first)."""
        clone = copy.copy(self)
        clone.source = f"{source}: {self.source}" if self.source else source
        clone.args = (clone._compose(),)
        return clone

    def nested_under(self, prefix: str) -> "ManifestError":
        """A copy whose path is nested under ``prefix``: ``name`` under ``spec.containers[0]``
        becomes ``spec.containers[0].name``. Lets parsers report paths relative to their input
        and build the full path only when an error actually happens."""
        clone = copy.copy(self)
        if not self.path:
            clone.path = prefix
        elif self.path.startswith("["):
            clone.path = prefix + self.path
        else:
            clone.path = f"{prefix}.{self.path}"
        clone.args = (clone._compose(),)
        return clone

    def __reduce__(self):
        return (_rebuild_error, (type(self), self.reason, self.path, self.source))


class ManifestWarning(UserWarning):
    """Something in the input was dropped or read leniently: an unknown field, a field name that
    matched only case-insensitively, objects of kinds fastsched does not model, a pod bound to a
    node that does not exist. ``warnings.simplefilter("error", ManifestWarning)`` makes them fatal."""


class QuantityError(ManifestError):
    """A resource quantity does not follow the Kubernetes quantity grammar."""


def _rebuild_error(cls, reason, path, source):
    return cls(reason, path, source)
