"""Semantic versions (semver.org 2.0.0) as Kubernetes' CEL semver library and the DRA
``versionValue`` attribute read them (``github.com/blang/semver/v4`` strict parsing)."""
from __future__ import annotations

import re
from functools import total_ordering

__all__ = ["Semver", "parse_semver"]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


@total_ordering
class Semver:
    """A parsed version; ordered by semver precedence (build metadata ignored)."""

    __slots__ = ("major", "minor", "patch", "pre", "text")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple, text: str):
        self.major, self.minor, self.patch, self.pre, self.text = major, minor, patch, pre, text

    def _key(self) -> tuple:
        # a version without pre-release parts ranks above one with them
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: "Semver") -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: "Semver") -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text


def parse_semver(text: str) -> Semver | None:
    """The version ``text`` denotes, or None when it is not a strict semver 2.0.0 string."""
    if not isinstance(text, str):
        return None
    m = _SEMVER.match(text)
    if m is None:
        return None
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, text)
