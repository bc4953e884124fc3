"""The error family of fastsched.

Every error fastsched raises on purpose derives from :class:`FastschedError`, so a caller can tell
"the input is wrong" (catch ``FastschedError``) from a bug (anything else)::

    FastschedError
    ├── LocatedError                 a problem at a field path of some input
    │   ├── ManifestError (ValueError)     fastsched.api: malformed Kubernetes manifests
    │   │   ├── QuantityError              a malformed resource quantity
    │   │   └── ValidationError            what the API server's validation rejects
    │   └── SpecError (ValueError)         fastsched.sim: cluster specs and scenarios
    │                                      (``ScenarioError`` is the same class)
    ├── ConfigError (ValueError)     fastsched.config: every problem of a KubeSchedulerConfiguration,
    │                                as a list of field errors
    └── CLIError                     fastsched.cli: an expected command-line failure

Errors that keep ``ValueError`` as a base still satisfy ``except ValueError`` as they always did.

Messages that point into an input share one shape, built by :func:`located`::

    <source>: <field path>: <reason>

``source`` names the input (a file, ``Pod default/web``, ``document 3``), ``path`` the field
(``spec.containers[0].resources.requests.cpu``, ``profiles[0].plugins.score``,
``arrivals[1].rate``); either may be absent. Manifests, configurations and scenarios all format
their messages through it.
"""
from __future__ import annotations

import copy
from typing import Any

__all__ = ["NOT_UTF8_TEXT", "FastschedError", "LocatedError", "NotFoundError", "located", "nest_path"]

#: Why a file that is not text cannot be read (the same words for manifests, configs, scenarios).
NOT_UTF8_TEXT = "not a UTF-8 text file (YAML or JSON)"


class FastschedError(Exception):
    """Base class of every error fastsched raises on purpose (bad input, impossible request)."""


class NotFoundError(FastschedError, KeyError):
    """An object that is not there, in the API server's NotFound words: ``pods "p1" not found``,
    ``storageclasses.storage.k8s.io "fast" not found`` (see
    :func:`fastsched.api.validation.group_resource`). A KeyError too, which is what updating or
    deleting an unknown object raised before."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""


def located(reason: str, path: Any = None, source: Any = None) -> str:
    """``<source>: <path>: <reason>``, leaving out whichever of ``source`` and ``path`` is empty."""
    parts = [str(part) for part in (source, path) if part is not None and str(part)]
    parts.append(str(reason))
    return ": ".join(parts)


def nest_path(prefix: str, path: str | None) -> str:
    """``path`` nested under ``prefix``: ``name`` under ``spec.containers[0]`` is
    ``spec.containers[0].name``; an index path (``[2].name``) is appended as is."""
    if not path:
        return prefix
    if not prefix:
        return path
    if path.startswith("["):
        return prefix + path
    return f"{prefix}.{path}"


class LocatedError(FastschedError):
    """A problem at a field path of some input.

    ``reason`` says what is wrong, ``path`` names the field (or None) and ``source`` the input it
    came from (or None); ``str()`` is :func:`located` of the three. Parsers raise with a path
    relative to what they read and callers add context with :meth:`nested_under` and
    :meth:`with_source`, so the full location is only assembled when an error happens.
    """

    def __init__(self, reason: str, path: str | None = None, source: str | None = None):
        self.reason = reason
        self.path = path or None
        self.source = source or None
        super().__init__(self._compose())

    def _compose(self) -> str:
        return located(self.reason, self.path, self.source)

    def _recompose(self) -> None:
        self.args = (self._compose(),)

    def with_source(self, source: str):
        """A copy of this error whose message is prefixed by ``source`` (outermost first)."""
        clone = copy.copy(self)
        clone.source = f"{source}: {self.source}" if self.source else source
        clone._recompose()
        return clone

    def nested_under(self, prefix: str):
        """A copy whose path is nested under ``prefix`` (see :func:`nest_path`)."""
        clone = copy.copy(self)
        clone.path = nest_path(prefix, self.path)
        clone._recompose()
        return clone

    def __reduce__(self):
        return (_rebuild_located, (type(self), self.reason, self.path, self.source))


def _rebuild_located(cls, reason, path, source):
    return cls(reason, path, source)
