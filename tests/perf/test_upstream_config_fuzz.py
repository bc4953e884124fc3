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
import functools
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
from tests.mutation import DELETE, DUPLICATE, apply, places

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
#: where a refusal says it is: ``<source>: [2].workloadTemplate[1].count: ...``, a workload or
#: its parameter by name, or the test case by name
LOCATED = re.compile(r"^\S+: (\[\d+\]|[^:]*(workload|param|test case|op|template|\$))", re.IGNORECASE)


def _case_places(data: list) -> list[tuple]:
    """Places inside each test case's workloadTemplate and workloads (and the lists themselves)."""
    out = []
    for i, case in enumerate(data):
        for key in ("workloadTemplate", "workloads"):
            if key in case:
                out.append((i, key))
                out.extend(places(case[key], (i, key)))
    return out


PLACES = {path: _case_places(data) for path, data in DATA.items()}


def _set_opcode(name: str, parent: Any, key: Any) -> None:
    if isinstance(parent[key], dict):  # the op made another op
        parent[key]["opcode"] = name


def _apply(doc: Any, path: tuple, change: Any) -> None:
    if isinstance(change, tuple):  # ("opcode", name)
        change = functools.partial(_set_opcode, change[1])
    apply(doc, path, change, duplicate_fields=True)


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
