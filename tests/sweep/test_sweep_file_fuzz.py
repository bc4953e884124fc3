"""A property round over sweep files (``fastsched sweep FILE``, :func:`load_sweep`): a valid sweep
with one field, at any level, replaced by a value of another type (or a key of another type
added) is loaded or refused with a :class:`SweepError` that starts with a field path, never
another exception. Derandomized and bounded (a few seconds)."""
from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.sim.sweep import Sweep, SweepError, load_sweep

SCENARIO = {"name": "tiny", "seed": 1, "until": 60,
            "cluster": {"nodes": 4, "shapes": [{"cpu": 4, "memory": "16Gi"}]},
            "arrivals": [{"name": "web", "rate": 0.5, "count": 4,
                          "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}]}
BASE = {"name": "fuzz", "seed": 3, "scenario": SCENARIO,
        "runs": [{"name": "a", "seed": 1, "until": 30}, {"name": "b", "cluster.nodes": 6, "arrivals.0.rate": 1.0}],
        "grid": {"until": [20, 40], "cluster.nodes": [2, 3]}}

#: values of every JSON/YAML type (and keys YAML may give that are not strings)
WRONG = st.sampled_from([None, True, 0, -1, 2.5, float("nan"), "", "x", "a.b", "0", [], [1], {}, {"k": 1},
                         {1: "one"}, 10 ** 30])
KEYS = st.sampled_from([1, 2.5, True, None, "name", "seed", "config", "plugins", "x.y", "arrivals.9.rate",
                        "cluster.nodes.0", "", "."])
#: a field path at the start of the message: ``seed:``, ``runs[1]: until:``, ``grid.until:``,
#: ``scenario:``, ``plugins[0]:``, or the whole file (``a sweep must be ...``, ``no runs``)
#: (an unknown top-level field is named as YAML gave it: ``1: unknown field (known: ...)``)
PATH_FIRST = re.compile(r"^(?:(?:name|description|scenario|seed|plugins|runs|grid)\b[^:]*:|[^:]*: unknown field \(known: "
                        r"|a sweep must be|no runs)")


def _places(value: Any, path: tuple = ()) -> list[tuple]:
    """Every place in ``value`` (the root included) as a tuple of keys and indexes."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_places(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_places(v, (*path, i)))
    return out


PLACES = _places(BASE)


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return doc


def _container(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _loads_or_refuses_at_a_field(doc: Any) -> None:
    """``doc`` written as a sweep file (YAML, as ``fastsched sweep`` reads it) loads, or is refused
    naming a field."""
    text = yaml.safe_dump(doc, sort_keys=False)
    try:
        result = load_sweep(text)
    except SweepError as e:
        assert PATH_FIRST.match(str(e)), str(e)
    else:
        assert isinstance(result, Sweep) and result.runs


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.sampled_from(PLACES), value=WRONG)
def test_a_field_of_another_type_anywhere_is_refused_at_a_field(at, value):
    _loads_or_refuses_at_a_field(_set(copy.deepcopy(BASE), at, value))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(at=st.sampled_from([p for p in PLACES if isinstance(_container(BASE, p), dict)]), key=KEYS, value=WRONG)
def test_a_key_of_any_kind_added_anywhere_is_refused_at_a_field(at, key, value):
    doc = copy.deepcopy(BASE)
    _container(doc, at)[key] = value
    _loads_or_refuses_at_a_field(doc)


def _with(change) -> dict:
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


@pytest.mark.parametrize("change, message", [
    # sorting the unknown top-level keys raised TypeError (an int among strings)
    (lambda d: d.update({1: "x", "zz": 2}), "1: unknown field (known: "),
    # a run's key that is not a string: AttributeError ('int' object has no attribute 'split')
    (lambda d: d["runs"][0].update({2: 1}), "runs[0]: 2: a field name must be a string, got int"),
    (lambda d: d["grid"].update({None: [1]}), "grid: null: a field name must be a string, got null"),
    # keys as the YAML file spells them (Python's None and True read oddly in a YAML user's error)
    (lambda d: d.update({None: 1}), "null: unknown field (known: "),
    (lambda d: d["runs"][0].update({True: 1}), "runs[0]: true: a field name must be a string, got bool"),
    # an override inside a scalar field replaced the scalar by a mapping, refused only in the run
    (lambda d: d["runs"][0].update({"cluster.nodes.0": {"cpu": 2}}),
     "runs[0]: cluster.nodes.0: cluster.nodes is int 4 in the scenario: no field inside it to override"),
    (lambda d: d["grid"].update({"seed.x": [1]}), "grid: seed.x: seed is int 1 in the scenario: no field inside it"),
    # arrivals (a stream's mix) of another type: TypeError ('int' object is not iterable)
    # (the run's override inside it is refused at once, naming the scalar)
    (lambda d: d["scenario"].update(arrivals=5), "runs[1]: arrivals.0.rate: arrivals is int 5 in the scenario"),
    (lambda d: (d["scenario"].update(arrivals=5), d["runs"].pop(1)), None),
    (lambda d: d["scenario"]["arrivals"][0].update(mix=5), None),
    # a dotted override through a list item that is null: TypeError (item assignment on None)
    (lambda d: d["scenario"]["arrivals"].__setitem__(0, None),
     "runs[1]: arrivals.0.rate: the scenario has no field to override here"),
], ids=["unknown-keys-of-mixed-types", "run-key-int", "grid-key-null", "top-key-null", "run-key-bool",
        "override-inside-int", "grid-override-inside-int", "arrivals-int", "arrivals-int-no-override", "mix-int",
        "override-through-null"])
def test_what_the_round_found_is_refused_at_its_field_or_left_to_the_scenario(change, message):
    """The sweep file's loader on what the property round found: a SweepError naming the field, or
    (a scenario field of another type) loaded, for the scenario's own loader to refuse in the run."""
    text = yaml.safe_dump(_with(change), sort_keys=False)
    if message is None:
        assert load_sweep(text).runs
    else:
        with pytest.raises(SweepError) as info:
            load_sweep(text)
        assert str(info.value).startswith(message), str(info.value)
