"""A Griffe extension for the API pages: fastsched's docstrings use Sphinx roles
(:class:`~fastsched.x.Y`, :func:`f`, :mod:`m`, :data:`D`, :meth:`m`, :attr:`a`), which Markdown
shows as they are written; this turns each into a code span, ``Y`` for the ``~`` form (Sphinx's
short name), the target as written otherwise. Loaded by mkdocs.yml (mkdocstrings' ``extensions``)."""
from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _code_span(match: re.Match) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target.lstrip('.')}`"


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":`" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(_code_span, obj.docstring.value)
