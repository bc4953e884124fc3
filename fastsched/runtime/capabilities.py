"""What each plugin can do, resolved when the framework is built.

A plugin may offer vectorized methods beside upstream's per-node ones (see
:mod:`fastsched.framework.vectorized`). The framework looks them up once per plugin, here, so a
scheduling cycle never probes a plugin with ``hasattr``. Plugins written against fastsched before
the protocol was renamed (``filter_batch``, ``score_batch``, ``normalize_score_batch``) still get
their vectorized path, with a DeprecationWarning naming the new method.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

#: new method name -> the name it had before the protocol was renamed (upstream v1.35 uses
#: "batch" for opportunistic batching, a different thing)
_OLD_NAMES = {"filter_vectorized": "filter_batch", "score_vectorized": "score_batch",
              "normalize_score_vectorized": "normalize_score_batch"}
_warned: set[tuple[type, str]] = set()


def vectorized_method(obj: Any, name: str) -> Callable | None:
    """``obj``'s bound vectorized method ``name``, its pre-rename alias, or None."""
    if obj is None:
        return None
    fn = getattr(obj, name, None)
    if callable(fn):
        return fn
    old = _OLD_NAMES.get(name)
    if not old:
        return None
    fn = getattr(obj, old, None)
    if not callable(fn):
        return None
    key = (type(obj), old)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(DeprecationWarning(f"{type(obj).__name__}.{old} is deprecated: name it {name} "
                                         f"(fastsched's vectorized protocol was renamed)"), stacklevel=3)
    return fn
