"""A property round over upstream's own scheduler_perf configs (the vendored v1.37.2
``performance-config.yaml`` files, every topic): one to three places in a test case's ops, its
workloads or their params changed (a value of another type, deleted, huge, negative, unicode, an
op or workload repeated, an op's ``opcode`` swapped for another op's, a key added), decoded as
``fastsched perf`` decodes a config (go-yaml, then :func:`~fastsched.perf.parse_perf_config`).

Each mutant must be refused with a :class:`~fastsched.perf.PerfConfigError` that names where
(the test case's index and the field path below it, or the workload and its parameter, or the
test case by name), or parse; never another exception. (``test_perf_config_mutation_fuzz`` runs
mutants of one many-op config to the end; this one covers the shapes of every upstream config.)
Derandomized; a few seconds.
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.errors import FastschedError
from fastsched.perf import PerfConfigError, parse_perf_config
from fastsched.util.goyaml import GoYAMLStrictLoader

#: FASTSCHED_FUZZ_SCALE=N draws N times the examples (a longer round than the suite's)
SCALE = int(os.environ.get("FASTSCHED_FUZZ_SCALE", "1"))
UPSTREAM = Path(__file__).parent / "data" / "upstream-v1.37.2"
CONFIGS = sorted(UPSTREAM.rglob("performance-config.yaml"))
DATA = {path: yaml.load(path.read_text(encoding="utf-8"), Loader=GoYAMLStrictLoader) for path in CONFIGS}
OPCODES = ["createNodes", "createNamespaces", "createPods", "createPodSets", "createAny", "createResourceClaims",
           "churn", "barrier", "sleep", "startCollectingMetrics", "stopCollectingMetrics", "deletePods",
           "updateAny", "createPodGroups", "allocResourceClaims", "createTestCases", "nosuchop"]
WRONG = [None, True, 0, -1, 7, 2 ** 63, -2 ** 31 - 1, 1e300, 2.5, "", "x", "$nosuch", "ünïcødé-☃", "10s", "-5s",
         [], [1], ["performance"], {}, {"k": 1}]
DELETE, DUPLICATE = object(), object()
#: where a refusal says it is: ``<source>: [2].workloadTemplate[1].count: ...``, a workload or
#: its parameter by name, or the test case by name
LOCATED = re.compile(r"^\S+: (\[\d+\]|[^:]*(workload|param|test case|op|template|\$))", re.IGNORECASE)


def _places(value: Any, path: tuple) -> list[tuple]:
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*path, key))
            out.extend(_places(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*path, index))
            out.extend(_places(item, (*path, index)))
    return out


def _case_places(data: list) -> list[tuple]:
    """Places inside each test case's workloadTemplate and workloads (and the lists themselves)."""
    out = []
    for i, case in enumerate(data):
        for key in ("workloadTemplate", "workloads"):
            if key in case:
                out.append((i, key))
                out.extend(_places(case[key], (i, key)))
    return out


PLACES = {path: _case_places(data) for path, data in DATA.items()}


def _apply(doc: Any, path: tuple, change: Any) -> None:
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
        elif isinstance(target, dict):
            target[f"{path[-1]}Again"] = copy.deepcopy(target[path[-1]])  # an unknown field
    elif isinstance(change, tuple):  # ("opcode", name): the op made another op
        if isinstance(target[path[-1]], dict):
            target[path[-1]]["opcode"] = change[1]
    else:
        target[path[-1]] = copy.deepcopy(change)


@st.composite
def mutants(draw):
    config = draw(st.sampled_from(CONFIGS))
    data = copy.deepcopy(DATA[config])
    changes = []
    for path in draw(st.lists(st.sampled_from(PLACES[config]), min_size=1, max_size=3, unique=True)):
        change = draw(st.sampled_from([DELETE, DUPLICATE, *WRONG, *(("opcode", op) for op in OPCODES)]))
        _apply(data, path, change)
        changes.append((path, change))
    return config, data, changes


@settings(max_examples=250 * SCALE, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutants())
def test_a_mutated_upstream_config_parses_or_is_refused_where_it_is_wrong(case):
    config, data, changes = case
    try:
        parse_perf_config(data, base_dir=config.parent, source=config.parent.name)
    except PerfConfigError as error:
        message = str(error)
        assert LOCATED.match(message), f"{message} ({changes})"
        assert "\n" not in message.strip(), message
    except FastschedError as error:  # pragma: no cover - what the round looks for
        pytest.fail(f"{type(error).__name__} instead of a PerfConfigError: {error} ({changes})")


@pytest.mark.parametrize("config", CONFIGS, ids=[str(c.parent.relative_to(UPSTREAM)) for c in CONFIGS])
def test_every_upstream_config_parses_unmutated(config):
    parse_perf_config(copy.deepcopy(DATA[config]), base_dir=config.parent, source=config.parent.name)
