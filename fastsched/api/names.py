"""Names as the API server and the controllers generate them.

Upstream: ``k8s.io/apiserver/pkg/storage/names`` (``SimpleNameGenerator``) and
``k8s.io/apimachinery/pkg/util/rand`` (``String``, ``SafeEncodeString``). The API server draws
from an unseeded source; here a :class:`NameGenerator` owns a seeded :class:`random.Random`, so
the same seed and the same sequence of requests give the same names.
"""
from __future__ import annotations

import random

__all__ = [
    "NAME_ALPHABET",
    "MAX_NAME_LENGTH",
    "MAX_GENERATED_NAME_LENGTH",
    "RANDOM_SUFFIX_LENGTH",
    "NameGenerator",
    "safe_encode_string",
]

#: ``rand.alphanums``: no vowels (no accidental words) and no look-alike characters.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: The longest name a DNS-1123 label allows (``validation.DNS1123LabelMaxLength``).
MAX_NAME_LENGTH = 63
#: Number of random characters appended to ``generateName``.
RANDOM_SUFFIX_LENGTH = 5
#: ``generateName`` is cut to this length before the suffix (``maxGeneratedNameLength``).
MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_SUFFIX_LENGTH
_ALPHABET_SIZE = len(NAME_ALPHABET)
_ALPHABET_BITS = _ALPHABET_SIZE.bit_length()  # random.Random._randbelow_with_getrandbits's k


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each character mapped into :data:`NAME_ALPHABET` by its code."""
    return "".join(NAME_ALPHABET[ord(char) % len(NAME_ALPHABET)] for char in text)


class NameGenerator:
    """Seeded ``SimpleNameGenerator``: ``generate("web-")`` -> ``"web-x7k2q"``.

    ``random_string(n)`` is ``rand.String(n)``, also used by controllers for hashes that upstream
    derives from Go-specific object dumps (the pod-template-hash of a Deployment's ReplicaSet).
    """

    __slots__ = ("_rng",)

    def __init__(self, seed: int | random.Random = 0):
        self._rng = seed if isinstance(seed, random.Random) else random.Random(f"fastsched-names-{seed}")

    def random_string(self, length: int) -> str:
        """``length`` characters drawn uniformly from :data:`NAME_ALPHABET`.

        The draws of ``random.Random.choice(NAME_ALPHABET)`` made inline (``_randbelow``'s
        rejection sampling: ``getrandbits(k)`` with ``k = n.bit_length()``, again while the draw is
        >= ``n``): the same characters and the same generator state, without two Python calls per
        character (a third of the cost of naming a pod). A subclass of ``random.Random`` may
        draw otherwise (``_randbelow_without_getrandbits``): it keeps ``choice``."""
        rng = self._rng
        if type(rng) is not random.Random:
            return "".join(rng.choice(NAME_ALPHABET) for _ in range(length))
        getrandbits = rng.getrandbits
        out = []
        for _ in range(length):
            r = getrandbits(_ALPHABET_BITS)
            while r >= _ALPHABET_SIZE:
                r = getrandbits(_ALPHABET_BITS)
            out.append(NAME_ALPHABET[r])
        return "".join(out)

    def generate(self, base: str) -> str:
        """A name from ``metadata.generateName``: ``base`` cut to 58 characters plus 5 random ones."""
        return base[:MAX_GENERATED_NAME_LENGTH] + self.random_string(RANDOM_SUFFIX_LENGTH)

    def getstate(self) -> tuple[object, ...]:
        """The generator's state (for forks that must continue the same name stream)."""
        return self._rng.getstate()

    def setstate(self, state: tuple[object, ...]) -> None:
        self._rng.setstate(state)
