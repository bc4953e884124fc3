"""Mutation fuzz of the scenario loader and the simulation: the example scenarios with one field made
wrong.

Every field of examples/scenario.yaml and examples/gang-training.yaml (every leaf and every
object/array node) is replaced, one at a time, by values of the wrong JSON type, negative, huge,
null or empty; the scenario (cut to 60 s) is loaded and simulated. Each mutant must either run or
be refused with a :class:`~fastsched.errors.FastschedError` whose path names the mutated field
(or a field inside or around it, as ``cluster.zones`` for a bad zone name); never another
exception, never a hang. The first run of this fuzz found two dozen kinds of traceback (a
template's ``metadata: 7``, a gang member's ``resources: []``, ``duration.distribution: [1]``,
counts of 2**63 overflowing NumPy) and label values refused only by the generated Node's
validation, which named the Node's field instead of the scenario's.

Not mutated to huge values: a stream's ``rate`` and ``count`` (a stream of 2**63 pods is
simulated as asked: it does not end, as ``until: 1e12`` with open-ended streams does not).
``FASTSCHED_FUZZ_MUTANTS`` sets the sample (default 300; ``all`` runs every mutant).
"""
from __future__ import annotations

import copy
import os
import random
import signal
import warnings
from pathlib import Path

import pytest
import yaml

from fastsched.errors import FastschedError
from fastsched.sim import simulate
from fastsched.sim.scenario import Scenario
from fastsched.sim.spec import child

ROOT = Path(__file__).resolve().parents[2]
FILES = ("examples/scenario.yaml", "examples/gang-training.yaml")
BAD_VALUES = [("string", "text"), ("negative", -1), ("huge int", 2 ** 63), ("bool", True), ("list", [1, 2]),
              ("dict", {"x": 1}), ("null", None), ("empty string", "")]
PER_MUTANT_SECONDS = 30
#: fields whose huge values ask for endless work by design (see the module docstring)
ENDLESS = {"rate", "count", "interval"}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def _leaves(value, prefix=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _leaves(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from _leaves(v, (*prefix, i))


def _path_text(path) -> str:
    """The field path as the spec's errors write it (``selector[topology.kubernetes.io/zone]``)."""
    out = ""
    for part in path:
        out = child(out, part) if out else str(part)
    return out


def all_mutants():
    out = []
    for name in FILES:
        raw = yaml.safe_load((ROOT / name).read_text())
        raw["until"] = 60
        for path in _leaves(raw):
            if path[0] in ("until", "name", "description"):
                continue
            for label, bad in BAD_VALUES:
                if label == "huge int" and path[-1] in ENDLESS and "arrivals" in path:
                    continue
                out.append((name, raw, path, label, bad))
    return out


def sample(mutants):
    setting = os.environ.get("FASTSCHED_FUZZ_MUTANTS", "300")
    if setting == "all" or int(setting) >= len(mutants):
        return mutants
    rng = random.Random(20261129)
    return [mutants[i] for i in sorted(rng.sample(range(len(mutants)), int(setting)))]


def _json_kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, str)):
        return "scalar"  # (strings and numbers both fit quantities and names)
    return "list" if isinstance(value, list) else "object" if isinstance(value, dict) else "null"


def outcome(name, raw, path, bad) -> tuple[str, str]:
    mutant = copy.deepcopy(raw)
    parent = mutant
    for part in path[:-1]:
        parent = parent[part]
    original = parent[path[-1]]
    parent[path[-1]] = copy.deepcopy(bad)
    previous = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simulate(Scenario(mutant, base_dir=ROOT / "examples"), record=None)
        return "ran", ""
    except Hang:
        return "hang", ""
    except FastschedError as error:
        where = getattr(error, "path", None) or ""
        if not where:
            return "unnamed", str(error)
        text, parent = _path_text(path), _path_text(path[:-1])
        # the field itself, a field inside it, its parent (a bad item refused at its list) or a
        # sibling (``max`` checked against a changed ``min``)
        related = where.startswith(text) or text.startswith(where) or (parent and where.startswith(parent))
        if not related and isinstance(bad, (bool, dict)) and _json_kind(bad) != _json_kind(original):
            # a value no field takes in another form (a boolean, an unknown mapping) is refused at
            # the field; other bad values may be refused where they matter (a renamed
            # PriorityClass at the template naming it, a label value changed at the volume pool
            # selecting nodes by it)
            return "unnamed", f"{where!r}: {error}"
        return "refused", ""
    except Exception as error:  # noqa: BLE001 - what the fuzz looks for
        return "crash", f"{type(error).__name__}: {error}"
    finally:
        if previous is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def test_the_examples_run_unmutated():
    for name in FILES:
        raw = yaml.safe_load((ROOT / name).read_text())
        raw["until"] = 60
        assert simulate(Scenario(raw, base_dir=ROOT / "examples"), record=None).summary["pods_total"] > 0


def test_single_field_mutants_run_or_are_refused_at_their_field():
    mutants = sample(all_mutants())
    counts = {"ran": 0, "refused": 0, "crash": 0, "hang": 0, "unnamed": 0}
    failures = []
    for name, raw, path, label, bad in mutants:
        result, detail = outcome(name, raw, path, bad)
        counts[result] += 1
        if result not in ("ran", "refused"):
            failures.append(f"{result}: {name} {_path_text(path)} = {label}: {detail}"[:400])
    print(f"\nscenario mutation fuzz: {len(mutants)} mutants: {counts}")
    assert not failures, "\n".join(failures[:30])
    assert counts["refused"] > len(mutants) // 4 and counts["ran"] > len(mutants) // 20


@pytest.mark.parametrize("name, path, bad, where", [
    ("examples/scenario.yaml", ("cluster", "zones"), 2 ** 63, "cluster.zones"),
    ("examples/scenario.yaml", ("cluster", "pods", "count"), 2 ** 63, "cluster.pods.count"),
    ("examples/scenario.yaml", ("cluster", "labels", "disktype"), -1, "cluster.labels.disktype"),
    ("examples/scenario.yaml", ("priority_classes", 0, "value"), 2 ** 63, "priority_classes[0].value"),
    ("examples/scenario.yaml", ("arrivals", 0, "template", "metadata"), "text", "arrivals[0].template.metadata"),
    ("examples/scenario.yaml", ("arrivals", 0, "duration", "distribution"), [1], "arrivals[0].duration.distribution"),
    ("examples/scenario.yaml", ("storage", "classes", 0, "capacity"), -1, "storage.classes[0].capacity"),
    ("examples/gang-training.yaml", ("cluster", "shapes", 0, "taints", 0, "value"), [1, 2],
     "cluster.shapes[0].taints[0].value"),
    ("examples/gang-training.yaml", ("arrivals", 1, "template", "spec", "containers", 0, "resources"), [1],
     "arrivals[1].template.spec.containers[0].resources"),
    ("examples/gang-training.yaml", ("arrivals", 1, "gang", "pods"), 2 ** 63, "arrivals[1].gang.pods"),
])
def test_what_the_fuzz_found_is_refused_at_the_field(name, path, bad, where):
    raw = yaml.safe_load((ROOT / name).read_text())
    mutant = copy.deepcopy(raw)
    parent = mutant
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = bad
    with pytest.raises(FastschedError) as info:
        simulate(Scenario(mutant, base_dir=ROOT / "examples"), record=None)
    assert info.value.path == where, str(info.value)
