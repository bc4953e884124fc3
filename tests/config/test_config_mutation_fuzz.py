"""Mutation fuzz of the configuration: every field of a full KubeSchedulerConfiguration made wrong.

The configuration is v1.37's defaults as ``fastsched config defaults`` prints them, plus a second
profile that sets what the defaults leave out (NodeAffinity's addedAffinity, PodTopologySpread's
List constraints, NodeResourcesFit's RequestedToCapacityRatio and ignoredResourceGroups, custom
score weights, a disabled plugin) and an ignorable extender with every verb but bind. Each field
(leaf or node) is replaced, one at a time, by each of the fuzz's bad values (wrong JSON types,
negative, huge, empty, unicode). Each mutant must end

* built into a Scheduler that schedules a few pods of both profiles to a result each, or
* refused with a :class:`fastsched.errors.FastschedError` naming a field: the mutated one or one
  that encloses it (defaulting merges ``multiPoint`` lists, so a bad plugin name there is reported
  at the list); a value of another JSON type than the field's must be refused at that very field
  (or inside it), as upstream's strict decoder refuses it;

never another exception, never a hang. A bare ``ValueError`` from building the extenders and
upstream's ``PreFilterPlugin "text" does not exist`` without a field were what this found first.
The default run takes a deterministic sample (``FASTSCHED_FUZZ_MUTANTS``, as the manifest fuzz;
``all`` runs the ~2,700 mutants in about half a minute).
"""
from __future__ import annotations

import copy
import signal
import warnings
from typing import Any

import pytest
import yaml

from fastsched import Scheduler
from fastsched.config import ConfigError, dump_config, load_config
from fastsched.errors import FastschedError, LocatedError
from fastsched.scheduler.result import ERROR, NO_PROFILE, SCHEDULED, UNSCHEDULABLE
from tests.api.test_mutation_fuzz import (BAD_VALUES, PER_MUTANT_SECONDS, Hang, _alarm, get, json_kind, paths,
                                          path_text, path_tokens, sample)

#: mutants run by default (of ~2,700): a few seconds
DEFAULT_SAMPLE = 500

RICH_PROFILE: dict[str, Any] = {
    "schedulerName": "rich",
    "plugins": {
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}, {"name": "ImageLocality", "weight": 2}],
                  "disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
        "filter": {"disabled": [{"name": "NodePorts"}]},
    },
    "pluginConfig": [
        {"name": "NodeAffinity", "args": {"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z0", "z1"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchFields": [
                    {"key": "metadata.name", "operator": "NotIn", "values": ["n0"]}]}}]}}},
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}},
        {"name": "NodeResourcesFit", "args": {
            "ignoredResourceGroups": ["example.org"],
            "scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                       {"utilization": 100, "score": 10}]}}}},
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
    ],
}

EXTENDER: dict[str, Any] = {
    # nothing listens on port 1: every call fails at once, and the extender is ignorable
    "urlPrefix": "http://127.0.0.1:1/ext", "filterVerb": "filter", "prioritizeVerb": "prioritize",
    "preemptVerb": "preempt", "weight": 2, "httpTimeout": "1s", "nodeCacheCapable": True, "ignorable": True,
    "managedResources": [{"name": "example.com/fpga", "ignoredByScheduler": True}],
}


def base_config() -> dict[str, Any]:
    doc = yaml.safe_load(dump_config(load_config(None)))
    doc["profiles"].append(copy.deepcopy(RICH_PROFILE))
    doc["extenders"] = [copy.deepcopy(EXTENDER)]
    return doc


def cluster() -> list[dict[str, Any]]:
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(3)]
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "a"}},
             "spec": {"schedulerName": "rich" if i % 2 else "default-scheduler",
                      "containers": [{"name": "c", "image": "nginx",
                                      "resources": {"requests": {"cpu": "1", "example.com/fpga": "1"},
                                                    "limits": {"example.com/fpga": "1"}}}]}}
            for i in range(4)]
    return nodes + pods


def _mutate(doc: dict, path: tuple, bad: Any) -> dict:
    mutant = copy.deepcopy(doc)
    get(mutant, path[:-1])[path[-1]] = copy.deepcopy(bad)
    return mutant


def _field_paths(error: FastschedError) -> list[str]:
    if isinstance(error, ConfigError):
        return [e.path for e in error.errors if getattr(e, "path", None)]
    if isinstance(error, LocatedError) and error.path:
        return [error.path]
    return []


def run(doc: dict) -> FastschedError | None:
    """Build a Scheduler from ``doc`` and schedule the cluster: None when every pod got a result,
    the error when refused. Anything else propagates."""
    previous = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                scheduler = Scheduler(load_config(doc), seed=0)
            except FastschedError as error:
                return error
            scheduler.add(cluster())  # a configuration that builds takes the same pods
            results = {r.pod.name: r.status for r in scheduler.run()}
        assert sorted(results) == ["p0", "p1", "p2", "p3"], results  # no pod lost
        # a renamed profile leaves its pods to no profile; a configuration upstream accepts can still
        # fail pods as upstream's does (a non-ignorable extender nobody answers, a negative
        # addedAffinity weight: `plugin "NodeAffinity" returns an invalid score -1`): results too
        assert set(results.values()) <= {SCHEDULED, UNSCHEDULABLE, NO_PROFILE, ERROR}, results
        return None
    finally:
        if previous is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def why_unnamed(error: FastschedError, path: tuple, original: Any, bad: Any) -> str | None:
    """Why a refusal does not name the mutated field or one enclosing it (None when it does)."""
    fields = [path_tokens(f) for f in _field_paths(error)]
    if not fields:
        return "the error names no field"
    mutated = tuple(map(str, path))
    # upstream's NewPreferredSchedulingTerms (component-helpers nodeaffinity.go) names a preferred
    # term's requirements without its `preference`: NodeAffinityArgs' errors say
    # `preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].operator`
    spellings = {mutated, tuple(step for step in mutated if step != "preference")}
    kinds = {json_kind(bad), json_kind(original)}
    if bad is not None and len(kinds) == 2 and kinds != {"string", "number"}:
        if not any(f[:len(m)] == m for f in fields for m in spellings):
            return f"a {json_kind(bad)} at {path_text(path)} was refused at {fields}, not at the field"
        return None
    if not any(f and (m[:len(f)] == f or f[:len(m)] == m) for f in fields for m in spellings):
        return f"refused at {fields}, neither {path_text(path)} nor a field enclosing it"
    return None


def all_mutants() -> list[tuple[tuple, str, Any]]:
    doc = base_config()
    return [(path, label, bad) for path in paths(doc) for label, bad in BAD_VALUES]


def outcome(doc: dict, path: tuple, bad: Any) -> tuple[str, str | None]:
    try:
        error = run(_mutate(doc, path, bad))
    except Hang:
        return "hang", f"no result in {PER_MUTANT_SECONDS}s"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return "crash", f"{type(exc).__name__}: {exc}"
    if error is None:
        return "ran", None
    why = why_unnamed(error, path, get(doc, path), bad)
    return ("unnamed", f"{why}: {error}") if why else ("refused", None)


def test_the_unmutated_configuration_builds_and_schedules():
    assert run(base_config()) is None


def test_single_field_mutants_build_and_schedule_or_are_refused_at_the_field():
    import os

    setting = os.environ.get("FASTSCHED_FUZZ_MUTANTS", str(DEFAULT_SAMPLE))
    mutants = sample(all_mutants(), None if setting == "all" else int(setting))
    doc = base_config()
    tally: dict[str, int] = {}
    bad: list[str] = []
    for path, label, value in mutants:
        kind, detail = outcome(doc, path, value)
        tally[kind] = tally.get(kind, 0) + 1
        if kind not in ("ran", "refused"):
            bad.append(f"{path_text(path)} = {label}: {kind}: {detail}")
    assert not bad, f"{len(bad)} of {len(mutants)} mutants:\n" + "\n".join(bad[:30])
    # the sample reaches both ends: mutants that still build and mutants refused at their field
    assert tally.get("ran", 0) > 0 and tally.get("refused", 0) > tally["ran"], tally


@pytest.mark.parametrize("path, bad, field", [
    (("extenders", 0, "urlPrefix"), "text", "extenders[0].urlPrefix"),
    (("profiles", 0, "plugins", "multiPoint", "enabled", 3, "name"), "Typo", "profiles[0].plugins.multiPoint"),
    (("profiles", 1, "plugins", "score", "enabled", 1, "name"), "Typo", "profiles[1].plugins.score.enabled[1].name"),
])
def test_what_the_fuzz_found_is_refused_at_its_field(path, bad, field):
    error = run(_mutate(base_config(), path, bad))
    assert isinstance(error, ConfigError), error
    assert str(error).startswith(field), str(error)
