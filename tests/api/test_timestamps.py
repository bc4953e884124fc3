"""``as_timestamp``'s memo of parsed RFC 3339 strings: a string parsed before gives what a fresh
parse gives (offsets, fractions, lower-case ``z``), an invalid one raises every time (errors are
not kept), and the memo stays bounded."""
import random
from datetime import datetime, timezone

import pytest

from fastsched.api import _manifest
from fastsched.api._manifest import as_timestamp
from fastsched.api.errors import ManifestError


def _fresh(text: str) -> float:
    """The parse without the memo (the reference)."""
    t = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    parsed = datetime.fromisoformat(t)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def _texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        base = f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:" \
               f"{rng.randrange(60):02d}:{rng.randrange(60):02d}"
        frac = rng.choice(["", ".5", f".{rng.randrange(10 ** 6):06d}"])
        zone = rng.choice(["Z", "z", "+02:00", "-07:30", ""])
        out.append(base + frac + zone)
    return out


def test_a_remembered_timestamp_is_the_fresh_parse():
    rng = random.Random(5)
    texts = _texts(rng, 300)
    first = [as_timestamp(t, "x") for t in texts]
    again = [as_timestamp(t, "x") for t in rng.sample(texts, len(texts))]
    assert first == [_fresh(t) for t in texts]
    assert sorted(again) == sorted(first)
    assert all(as_timestamp(t, "x") == _fresh(t) for t in texts)


def test_an_invalid_timestamp_raises_each_time_with_its_path():
    for _ in range(2):
        with pytest.raises(ManifestError, match="invalid RFC 3339 timestamp 'yesterday'") as e:
            as_timestamp("yesterday", "metadata.creationTimestamp")
        assert "metadata.creationTimestamp" in str(e.value)
    assert "yesterday" not in _manifest._PARSED_TIMESTAMPS


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(_manifest, "_MAX_PARSED_TIMESTAMPS", 50)
    monkeypatch.setattr(_manifest, "_PARSED_TIMESTAMPS", {})
    texts = _texts(random.Random(9), 500)
    assert [as_timestamp(t, None) for t in texts] == [_fresh(t) for t in texts]
    assert 0 < len(_manifest._PARSED_TIMESTAMPS) <= 50
