"""Upstream ``pkg/scheduler/util.As``: a queueing hint's old and new objects as the kind it expects."""
from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def as_typed(cls: type[T], go_type: str, old_obj: Any, new_obj: Any) -> tuple[T | None, T | None, Exception | None]:
    """``util.As[T](oldObj, newObj)``: both objects (``None`` stays ``None``), or an error naming
    the wrong type (``expected <go_type>, but got <type>``), the new object checked first."""
    for obj in (new_obj, old_obj):
        if obj is not None and not isinstance(obj, cls):
            return None, None, TypeError(f"expected {go_type}, but got {type(obj).__name__}")
    return old_obj, new_obj, None
