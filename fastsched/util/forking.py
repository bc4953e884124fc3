"""The ``__fork__`` hook: how a class that owns forked state is copied by ``Scheduler.fork()``.

A fork (:mod:`fastsched.scheduler.fork`) copies a scheduler's state in one walk, with sharing rules
(API objects shared, NumPy columns copy-on-write, caches left empty, ...). Most classes copy as
their fields. A class whose state needs another rule defines::

    def __fork__(self, copier: ForkCopier) -> Self

which returns the fork's object: it calls ``copier.remember(self, clone)`` before copying anything
that may refer back to ``self``, ``copier.copy(value)`` for the values the fork copies by the
rules, and ``copier.copy_fields(self)`` for the default copy of itself. The rule of a class thus
lives with the class (the node table shares its columns, the compiled cycle drops its plans), not
in the fork module, which would otherwise reach into their private fields.
"""
from __future__ import annotations

from typing import Any, Protocol

__all__ = ["ForkCopier"]


class ForkCopier(Protocol):
    """What a ``__fork__`` hook is given (implemented by ``fastsched.scheduler.fork``)."""

    #: ``id(original) -> its copy`` for everything copied so far (as ``copy.deepcopy``'s memo)
    memo: dict[int, Any]

    def copy(self, x: Any) -> Any:
        """``x`` copied by the fork's rules (shared, when its class is shared)."""
        ...

    def remember(self, x: Any, y: Any) -> Any:
        """Record ``y`` as the fork's ``x`` (later references to ``x`` get ``y``); returns ``y``."""
        ...

    def copy_fields(self, x: Any) -> Any:
        """The default copy of ``x``: a new instance whose fields are copied by the rules."""
        ...
