"""YAML documents whose shape the loaders' recursive walkers cannot take, refused at parsing.

The pure-Python YAML parsers (the configuration's duplicate-key loader, ``yaml.safe_load``) recurse
once per nesting level, and a recursive alias (``&a [*a]``) or an alias bomb (anchors repeated
into each other: ``a: &a [x, x]``, ``b: &b [*a, *a]``, ...) builds structures every decoder walks
forever or exponentially. :func:`checked` parses with a loader callable and raises
:class:`YAMLStructureError` (a ``yaml.YAMLError``, which each loader already turns into its own
error with the file and the field) for a document nested too deep, recursive, or expanding to too
many values. The manifest loader reads with libyaml, which refuses nesting past 1,000 levels itself.
"""
from __future__ import annotations

from typing import Any, Callable

import yaml

__all__ = ["MAX_DEPTH", "MAX_VALUES", "YAMLStructureError", "checked", "structure_problem"]

#: nesting deeper than any configuration, scenario or perf file needs, well inside what the
#: decoders' recursion takes
MAX_DEPTH = 100
#: values (maps, lists and scalars) after expanding aliases
MAX_VALUES = 2_000_000


class YAMLStructureError(yaml.YAMLError):
    """A YAML document nested too deep, recursive, or expanding to too many values."""


def _children(value: Any) -> list | None:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list):
        return value
    return None


def structure_problem(data: Any, *, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES) -> str | None:
    """What makes ``data`` (a parsed document) unreadable, or None. Walks it without recursion,
    each shared (aliased) value once, counting values as its expansion has them."""
    top = _children(data)
    if top is None:
        return None
    sizes: dict[int, int] = {}    # id -> values in its expansion (finished containers)
    on_path = {id(data)}
    stack: list[list] = [[data, iter(top), 1]]
    while stack:
        frame = stack[-1]
        for child in frame[1]:
            grandchildren = _children(child)
            if grandchildren is None:
                frame[2] += 1
                continue
            key = id(child)
            if key in on_path:
                return "a recursive alias (an anchor used inside its own value)"
            if key in sizes:
                frame[2] += sizes[key]
                if frame[2] > max_values:
                    return f"aliases expand it to more than {max_values:,} values"
                continue
            if len(stack) >= max_depth:
                return f"nested deeper than {max_depth} levels"
            on_path.add(key)
            stack.append([child, iter(grandchildren), 1])
            break
        else:
            stack.pop()
            on_path.discard(id(frame[0]))
            sizes[id(frame[0])] = frame[2]
            if frame[2] > max_values:
                return f"aliases expand it to more than {max_values:,} values"
            if stack:
                stack[-1][2] += frame[2]
    return None


def checked(load: Callable[[], Any]) -> Any:
    """``load()`` (a YAML parse), refused with a YAMLStructureError when the parser recursed too
    deep or the result is one :func:`structure_problem` names."""
    try:
        data = load()
    except RecursionError:
        raise YAMLStructureError(f"nested deeper than {MAX_DEPTH} levels") from None
    problem = structure_problem(data)
    if problem is not None:
        raise YAMLStructureError(problem)
    return data
