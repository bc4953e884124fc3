"""Mutation fuzz of the loader and the Scheduler: realistic manifests with one field made wrong.

Every field (every leaf and every object/array node) of every object of the scenarios below is
replaced, one at a time, by each of a set of bad values (wrong JSON types, negative, huge, empty,
unicode); the scenario is loaded into a Scheduler and run. Each mutant must end

* loaded and ran, or
* refused with a :class:`fastsched.errors.FastschedError` that names the object (its kind, and its
  name unless the mutation broke the metadata) and a field; a value of another JSON type than the
  field's must be refused at that very field (or inside it), as the API server's decoder refuses it;

never another exception, never a hang. The default run takes a deterministic sample of the mutants
(``FASTSCHED_FUZZ_MUTANTS``, default 4000; ``all`` runs every one); a hypothesis variant mutates
several fields at once with arbitrary JSON values.

Scenarios: examples/cluster.yaml (each object with two of its nodes, its namespace and priority
class), examples/workload.yaml, upstream's scheduler_perf DRA templates and
tests/api/data/mutation_corpus.yaml (volumes, CSI, DRA, ReplicationController, CronJob, PDB; and
workload-aware scheduling's Workload, PodGroup, gang members and a Job that asks for a gang; pod
groups sharing a claim; each run with the gates its document's ``fastsched.dev/feature-gates``
annotation names).
"""
from __future__ import annotations

import copy
import json
import os
import random
import signal
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from fastsched import Scheduler
from fastsched.api.validation import ValidationError
from fastsched.errors import FastschedError, LocatedError

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"

# (label, value): wrong JSON types, negative, huge, empty, unicode
BAD_VALUES: list[tuple[str, Any]] = [
    ("string", "text"),
    ("number", 7),
    ("negative", -1),
    ("huge int", 2 ** 63),
    ("1e999", json.loads("1e999")),
    ("bool", True),
    ("list", [1, 2]),
    ("empty list", []),
    ("dict", {"x": 1}),
    ("empty dict", {}),
    ("null", None),
    ("empty string", ""),
    ("unicode", "ünïcødé-☃\u202e"),
]

PER_MUTANT_SECONDS = 20


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """A JSON round trip: YAML anchors (examples/cluster.yaml shares label maps) become copies,
    so a mutation changes one place only."""
    return json.loads(json.dumps(value, default=str))


def _name(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def scenarios() -> list[tuple[str, list[dict], int]]:
    """``(id, objects, index of the object to mutate)``."""
    out: list[tuple[str, list[dict], int]] = []
    cluster = _plain(yaml.safe_load((ROOT / "examples" / "cluster.yaml").read_text()))["items"]
    nodes = [obj for obj in cluster if obj["kind"] == "Node"]
    base = [obj for obj in cluster if obj["kind"] in ("Namespace", "PriorityClass")]
    first_pod = next(obj for obj in cluster if obj["kind"] == "Pod")
    for obj in cluster:
        if obj["kind"] == "Node":
            objects = [obj, *base, first_pod]
        elif obj["kind"] in ("Namespace", "PriorityClass"):
            objects = [*nodes[:2], *base]
        else:
            objects = [*nodes[:2], *base, obj]
        out.append((f"cluster/{obj['kind']}/{_name(obj)}", objects, objects.index(obj)))
    workload = [_plain(doc) for doc in yaml.safe_load_all((ROOT / "examples" / "workload.yaml").read_text())
                if doc]
    for index, obj in enumerate(workload):
        out.append((f"workload/{obj['kind']}/{_name(obj)}", [*nodes[:2], *base, *workload], len(nodes[:2]) + len(base)
                    + index))
    for doc in yaml.safe_load_all((DATA / "mutation_corpus.yaml").read_text()):
        items = _plain(doc["items"])
        gates = ((doc["metadata"].get("annotations") or {}).get("fastsched.dev/feature-gates") or "")
        if gates:
            _GATES[doc["metadata"]["name"]] = {g.split("=")[0]: g.split("=")[1] == "true" for g in gates.split(",")}
        for index, obj in enumerate(items):
            out.append((f"{doc['metadata']['name']}/{obj['kind']}/{_name(obj)}", items, index))
    return out


#: scenario document name -> the feature gates its Scheduler runs with (from its annotation)
_GATES: dict[str, dict[str, bool]] = {}


def gates_for(scenario_id: str) -> dict[str, bool] | None:
    return _GATES.get(scenario_id.split("/")[0])


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every node below ``value`` (not ``value`` itself), parents before children."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


def path_text(path: tuple) -> str:
    """``spec.volumes[0].persistentVolumeClaim`` (map keys that are not identifiers in brackets,
    as fastsched's paths write them)."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.replace("_", "a").replace("-", "a").isalnum() and not part[:1].isdigit():
            text += f".{part}" if text else part
        else:
            text += f"[{part}]"
    return text


def get(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value


def mutate(objects: list[dict], index: int, path: tuple, bad: Any) -> list[dict]:
    mutant = copy.deepcopy(objects)
    parent = get(mutant[index], path[:-1])
    parent[path[-1]] = copy.deepcopy(bad)
    return mutant


def all_mutants() -> list[tuple[str, list[dict], int, tuple, str, Any]]:
    out = []
    for scenario_id, objects, index in scenarios():
        for path in paths(objects[index]):
            for label, bad in BAD_VALUES:
                out.append((scenario_id, objects, index, path, label, bad))
    return out


def sample(mutants: list, count: int | None) -> list:
    """A deterministic sample spread over every scenario (all of them when ``count`` is None)."""
    if count is None or count >= len(mutants):
        return mutants
    rng = random.Random(20260)
    return [mutants[i] for i in sorted(rng.sample(range(len(mutants)), count))]


def mutant_count() -> int | None:
    setting = os.environ.get("FASTSCHED_FUZZ_MUTANTS", "4000")
    return None if setting == "all" else int(setting)


# --------------------------------------------------------------------------------------------
# Running one mutant
# --------------------------------------------------------------------------------------------
class Hang(BaseException):
    """Raised by the alarm: a BaseException, so that the loop's handling of a failing plugin
    (which catches Exception, as it must) cannot swallow it and go on looping."""


def _alarm(signum, frame):
    raise Hang


def run(objects: list[dict], gates: dict[str, bool] | None = None) -> FastschedError | None:
    """Load ``objects`` into a Scheduler and run it: None when it ran, the error when refused.
    Any other exception propagates."""
    alarm = hasattr(signal, "SIGALRM")  # no hang detection where there is no SIGALRM (Windows)
    previous = signal.signal(signal.SIGALRM, _alarm) if alarm else None
    if alarm:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = Scheduler(feature_gates=gates)
            scheduler.add(objects)
            scheduler.run()
        return None
    except FastschedError as error:
        return error
    finally:
        if alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def field_paths(error: FastschedError) -> list[str]:
    if isinstance(error, ValidationError):
        return [field.path for field in error.errors]
    if isinstance(error, LocatedError) and error.path:
        return [error.path]
    return []


def check_refusal(error: FastschedError, obj: dict, path: tuple, original: Any, bad: Any) -> str | None:
    """Why a refusal does not name the object and the field (None when it does)."""
    message = str(error)
    kind, name = obj.get("kind"), _name(obj)
    touches_identity = path[0] in ("kind", "apiVersion") or path[:2] in (("metadata",), ("metadata", "name"),
                                                                           ("metadata", "namespace"),
                                                                           ("metadata", "generateName"))
    if (kind == "StatefulSet" and "volumeClaimTemplates" in path and "PersistentVolumeClaim" in message
            and f"-{name}-0" in message):
        # the API server does not validate a StatefulSet's claim templates: its controller fails
        # to create the claim (named <template>-<set>-<ordinal>), which fastsched reports as is
        kind = "PersistentVolumeClaim"
    if not touches_identity:
        if kind not in message:
            return f"the error does not name the kind {kind}"
        if name and name not in message:
            return f"the error does not name the object {name!r}"
    fields = field_paths(error)
    if not fields:
        return "the error names no field"
    kinds = {json_kind(bad), json_kind(original)}
    if bad is not None and len(kinds) == 2 and kinds != {"string", "number"}:
        # a value of another JSON type (strings and numbers both fit quantities and IntOrString):
        # the decoder refuses it at the field (or inside it)
        mutated = tuple(map(str, path))
        if not any(path_tokens(field)[:len(mutated)] == mutated for field in fields):
            return f"a {json_kind(bad)} at {path_text(path)} was refused at {fields}, not at the field"
    return None


def path_tokens(text: str) -> tuple[str, ...]:
    """``spec.containers[0].resources.requests[nvidia.com/gpu]`` -> its steps, however a map key
    is written (``.key`` or ``[key]``, as the decoder and the validation write them)."""
    tokens, current, index = [], "", 0
    while index < len(text):
        char = text[index]
        if char == "[":
            if current:
                tokens.append(current)
            end = text.index("]", index)
            tokens.append(text[index + 1:end])
            current, index = "", end + 1
            continue
        if char == ".":
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        tokens.append(current)
    return tuple(tokens)


def outcome(scenario_id, objects, index, path, label, bad) -> tuple[str, str | None]:
    """``("ran" | "refused" | "crash" | "hang" | "unnamed", detail)``."""
    original = get(objects[index], path)
    mutant = mutate(objects, index, path, bad)
    try:
        error = run(mutant, gates_for(scenario_id))
    except Hang:
        return "hang", f"no result in {PER_MUTANT_SECONDS}s"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return "crash", f"{type(exc).__name__}: {exc}"
    if error is None:
        return "ran", None
    why = check_refusal(error, objects[index], path, original, bad)
    if why:
        return "unnamed", f"{why}: {error}"
    return "refused", None


def describe(scenario_id, path, label, bad) -> str:
    return f"{scenario_id} {path_text(path)} = {label} ({bad!r})"


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------
def test_every_scenario_loads_and_runs_unmutated():
    seen = set()
    for scenario_id, objects, _ in scenarios():
        key = id(objects), tuple(map(id, objects))
        if key in seen:
            continue
        seen.add(key)
        assert run(copy.deepcopy(objects), gates_for(scenario_id)) is None, scenario_id


def test_single_field_mutants_load_and_run_or_are_refused_naming_the_object_and_field():
    mutants = sample(all_mutants(), mutant_count())
    counts = {"ran": 0, "refused": 0, "crash": 0, "hang": 0, "unnamed": 0}
    failures = []
    for mutant in mutants:
        result, detail = outcome(*mutant)
        counts[result] += 1
        if detail is not None:
            scenario_id, _, _, path, label, bad = mutant
            failures.append(f"{result}: {describe(scenario_id, path, label, bad)}: {detail}")
    print(f"\nmutation fuzz: {len(mutants)} mutants: {counts}")
    assert counts["ran"] + counts["refused"] == len(mutants), "\n".join(failures[:40])
    # the sample exercises both outcomes in earnest, and the type refusals
    assert len(mutants) >= min(2000, len(all_mutants()))
    assert counts["refused"] > len(mutants) // 3 and counts["ran"] > len(mutants) // 20


def test_the_issue_25_crashers_are_refused_at_their_field():
    """The mutants that loaded and then crashed Scheduler.run() (issue 25)."""
    by_id = {scenario_id: (objects, index) for scenario_id, objects, index in scenarios()}
    pod_objects, pod = by_id["volumes/Pod/app"]
    sts_objects, sts = by_id["volumes/StatefulSet/store"]
    cases = [
        (pod_objects, pod, ("spec", "volumes", 0, "persistentVolumeClaim"), "100m"),
        (pod_objects, pod, ("spec", "volumes", 0, "persistentVolumeClaim"), True),
        (pod_objects, pod, ("spec", "volumes", 0, "persistentVolumeClaim"), []),
        (pod_objects, pod, ("spec", "volumes", 0, "persistentVolumeClaim"), json.loads("1e999")),
        (sts_objects, sts, ("spec", "volumeClaimTemplates", 0, "metadata", "name"), [1, 2]),
        (sts_objects, sts, ("spec", "volumeClaimTemplates", 0, "spec"), "text"),
    ]
    for objects, index, path, bad in cases:
        error = run(mutate(objects, index, path, bad))
        assert isinstance(error, LocatedError), (path, bad)
        assert error.path == path_text(path)
        assert error.reason.startswith(f"json: cannot unmarshal {json_kind(bad)} into Go struct field ")
        assert check_refusal(error, objects[index], path, get(objects[index], path), bad) is None


@pytest.mark.parametrize("scenario_id, path, bad, expected", [
    # crashed in the Job's generateSelector: a null template metadata is Go's zero ObjectMeta
    ("cluster/Job/nightly-report", ("spec", "template", "metadata"), None, "ran"),
    # crashed in the pod template validation of a CronJob with a null job spec
    ("controllers/CronJob/report", ("spec", "jobTemplate", "spec"), None, "refused"),
    # crashed validating the labels an RC defaults from its template: null decodes as ""
    ("controllers/ReplicationController/legacy", ("spec", "template", "metadata", "labels", "app"), None,
     "refused"),
    # a null in a list or map of strings is "" to Go: refused by validation, at the Pod
    ("volumes/Pod/app", ("spec", "volumes", 2, "ephemeral", "volumeClaimTemplate", "spec", "accessModes", 0),
     None, "refused"),
    ("volumes/Pod/app", ("spec", "volumes", 2, "ephemeral", "volumeClaimTemplate", "metadata", "labels",
                         "scratch"), None, "ran"),
    # an ephemeral claim template's quantity is decoded with the pod (it named the claim before)
    ("volumes/Pod/app", ("spec", "volumes", 2, "ephemeral", "volumeClaimTemplate", "spec", "resources",
                         "requests", "storage"), "", "refused"),
    # a null consumer in a claim's status.reservedFor is Go's zero struct: refused by validation
    # (resource, name and uid required); it crashed the validation
    ("group-claims/ResourceClaim/claim-shared", ("status", "reservedFor", 0), None, "refused"),
    # the Priority admission of a PodGroup named no field
    ("gangs/PodGroup/workers", ("spec", "priorityClassName"), "text", "refused"),
])
def test_what_the_fuzz_found_is_fixed(scenario_id, path, bad, expected):
    objects, index = {sid: (objs, i) for sid, objs, i in scenarios()}[scenario_id]
    assert outcome(scenario_id, objects, index, path, "case", bad) == (expected, None)


def test_a_pod_group_whose_priority_differs_from_its_class_is_refused_at_spec_priority():
    objects, index = {sid: (objs, i) for sid, objs, i in scenarios()}["gangs/PodGroup/workers"]
    mutant = copy.deepcopy(objects)
    mutant[index]["spec"]["priority"] = 7
    error = run(mutant, gates_for("gangs/PodGroup/workers"))
    assert isinstance(error, LocatedError) and error.path == "spec.priority", error
    assert "priority set in the pod group (7) must match the priority computed (1000)" in str(error)


# --------------------------------------------------------------------------------------------
# Hypothesis: several fields at once, arbitrary JSON values
# --------------------------------------------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCENARIOS = scenarios()
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70)
    | st.floats(allow_nan=False) | st.text(max_size=12) | st.sampled_from(["", "0", "-1", "1e999", "100m", "ünï"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)


@st.composite
def multi_mutants(draw):
    scenario_id, objects, index = draw(st.sampled_from(_SCENARIOS))
    candidates = list(paths(objects[index]))
    chosen = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True))
    values = [draw(_JSON) for _ in chosen]
    return scenario_id, objects, index, chosen, values


@settings(max_examples=int(os.environ.get("FASTSCHED_FUZZ_EXAMPLES", "300")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(multi_mutants())
def test_multi_field_mutants_with_arbitrary_json_load_and_run_or_are_refused(case):
    scenario_id, objects, index, chosen, values = case
    mutant = copy.deepcopy(objects)
    for path, value in zip(chosen, values):
        try:
            parent = get(mutant[index], path[:-1])
            parent[path[-1]]  # an earlier mutation may have replaced an ancestor
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, (dict, list)):
            continue
        parent[path[-1]] = value
    try:
        error = run(mutant, gates_for(scenario_id))
    except Hang:
        pytest.fail(f"hang: {scenario_id} {[path_text(p) for p in chosen]} = {values!r}")
    if error is not None:
        assert field_paths(error) or "kind" in str(error), str(error)
