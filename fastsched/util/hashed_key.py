"""A dictionary key over a tuple whose hash is computed once, when made."""
from __future__ import annotations

__all__ = ["HashedKey"]


class HashedKey:
    """A key over ``parts`` (a hashable tuple) hashed once, when made: for keys looked up on every
    scheduling cycle whose parts (label selectors, containers, label maps, ...) hash deeply each
    time (the compiled cycle's shared plans, InterPodAffinity's count subscriptions). Equal to a
    HashedKey of equal parts, never to a plain tuple. Pickled and deep-copied by its parts (the hash
    of a string differs between processes); a scheduler fork shares it (immutable)."""

    __slots__ = ("parts", "_hash")

    def __init__(self, parts: tuple):
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is HashedKey and self._hash == other._hash
                                 and self.parts == other.parts)

    def __reduce__(self) -> tuple:
        return HashedKey, (self.parts,)

    def __fork__(self, copier: object) -> "HashedKey":
        return self

    def __repr__(self) -> str:
        return f"HashedKey{self.parts!r}"
