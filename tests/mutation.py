"""Places of a document and changes made at them, for the property rounds over mutated real input
(``tests/test_cli_fuzz.py``, ``tests/api/test_dump_entry_fuzz.py``,
``tests/perf/test_upstream_config_fuzz.py``): one walk and one applier, so that the rounds mutate
documents the same way."""
from __future__ import annotations

import copy
from typing import Any, Callable

#: a change that deletes the place's key or item
DELETE = object()
#: a change that repeats a list item (with ``duplicate_fields``, a mapping's field under a new,
#: unknown name ``<key>Again``)
DUPLICATE = object()


def places(value: Any, path: tuple = ()) -> list[tuple]:
    """Every place below ``value`` (not the root) as a tuple of keys and indexes, depth first."""
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*path, key))
            out.extend(places(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*path, index))
            out.extend(places(item, (*path, index)))
    return out


def apply(doc: Any, path: tuple, change: Any, *, duplicate_fields: bool = False) -> None:
    """``change`` made at ``path`` in ``doc``, in place: :data:`DELETE`, :data:`DUPLICATE`, a
    callable ``change(parent, key)``, or a value (a deep copy of it replaces the place's). Skipped
    when an earlier change removed the place or made an ancestor a scalar."""
    target = doc
    try:
        for part in path[:-1]:
            target = target[part]
        target[path[-1]]
    except (KeyError, IndexError, TypeError):
        return
    if not isinstance(target, (dict, list)):  # (an earlier change made the parent a string)
        return
    if change is DELETE:
        del target[path[-1]]
    elif change is DUPLICATE:
        if isinstance(target, list):
            target.append(copy.deepcopy(target[path[-1]]))
        elif duplicate_fields:
            target[f"{path[-1]}Again"] = copy.deepcopy(target[path[-1]])  # an unknown field
    elif callable(change):
        fn: Callable[[Any, Any], None] = change
        fn(target, path[-1])
    else:
        target[path[-1]] = copy.deepcopy(change)
