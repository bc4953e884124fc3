"""The aggregate :class:`ConfigError` of a configuration's problems, each a
:class:`~fastsched.util.field.FieldError` (field paths and errors live in
:mod:`fastsched.util.field`, shared with the API objects' validation).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import FastschedError, located
from ..util.field import FieldError


class ConfigError(FastschedError, ValueError):
    """Every problem found while loading, defaulting, validating or building a configuration.

    ``errors`` lists the :class:`FieldError` objects (deduplicated by message, in order). A problem
    with the document as a whole (unreadable file, bad YAML) has no field path: it is carried in
    ``message`` and ``errors`` may then be empty. ``str()`` follows upstream's aggregate form:
    one error as is, several as ``[a, b]``.
    """

    def __init__(self, errors: Iterable[FieldError] = (), message: str | None = None, *,
                 source: str | None = None) -> None:
        unique: list[FieldError] = []
        seen: set[str] = set()
        for err in errors:
            text = str(err)
            if text not in seen:
                seen.add(text)
                unique.append(err)
        self.errors = unique
        self.message = message
        #: the input the configuration came from (a file name), or None; prefixes ``str()``
        self.source = source or None
        super().__init__(self._format())

    def _format(self) -> str:
        parts = [str(e) for e in self.errors]
        if self.message is not None:
            parts.insert(0, self.message)
        text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        return located(text, source=self.source)

    def with_source(self, source: str) -> ConfigError:
        """The same errors, reported as coming from ``source`` (outermost first)."""
        return ConfigError(self.errors, self.message,
                           source=f"{source}: {self.source}" if self.source else source)

    def lines(self) -> list[str]:
        """One ``<source>: <field path>: <reason>`` line per problem (the document-level message first)."""
        parts = [str(e) for e in self.errors]
        if self.message is not None:
            parts.insert(0, self.message)
        return [located(p, source=self.source) for p in parts]

    def __reduce__(self):
        return (_rebuild_config_error, (self.errors, self.message, self.source))


def _rebuild_config_error(errors, message, source):
    return ConfigError(errors, message, source=source)
