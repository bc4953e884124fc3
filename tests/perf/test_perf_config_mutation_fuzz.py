"""Mutation fuzz of scheduler_perf configurations: every field of a many-op config made wrong.

The config below uses upstream's own templates (v1.37.2's, vendored under data/) in one test case
with createNodes (a label strategy), createNamespaces, createPods (with and without metrics), a
barrier, churn, start/stopCollectingMetrics, sleep and deletePods, parameters of each kind and a
threshold. Each field (leaf or node) is replaced, one at a time, by each of the manifest fuzz's
bad values (wrong JSON types, negative, huge, empty, unicode). Each mutant must end

* refused by :func:`~fastsched.perf.parse_perf_config` with a PerfConfigError naming the field
  (or one enclosing it), or
* run by :func:`~fastsched.perf.run_perf`, which reports every workload as passed,
  below-threshold, skipped or failed; a failed one says why, naming the field (or one enclosing
  it, or for a parameter the parameter's name) or the object the API server refused;

never another exception, never a hang. What it found first: a ``2**63`` count or parameter ran for
ever (Go's decoder refuses the first, and reads the second as no count), ``1e999`` as a
parameter was an OverflowError, an invalid namespace name escaped ``run_perf`` as a
ValidationError, and a churn template that does not exist was named ``templatePath``. The default
run takes a deterministic sample (``FASTSCHED_FUZZ_MUTANTS``, as the manifest fuzz; ``all`` runs
the ~1,000 mutants in about 10 s of CPU).
"""
from __future__ import annotations

import copy
import os
import signal
import warnings
from pathlib import Path
from typing import Any

import yaml

from fastsched.errors import FastschedError
from fastsched.perf import PerfConfigError, parse_perf_config, run_perf
from tests.api.test_mutation_fuzz import BAD_VALUES, PER_MUTANT_SECONDS, Hang, _alarm, get, paths, path_text, sample

TEMPLATES = Path(__file__).parent / "data" / "upstream-v1.37.2" / "templates"
#: mutants run by default (of ~1,000)
DEFAULT_SAMPLE = 300

CONFIG = """\
- name: Mixed
  defaultPodTemplatePath: templates/pod-default.yaml
  featureGates: {SchedulerAsyncAPICalls: false}
  labels: [performance]
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
    nodeTemplatePath: templates/node-default.yaml
    labelNodePrepareStrategy:
      labelKey: topology.kubernetes.io/zone
      labelValues: [zone1, zone2]
  - opcode: createNamespaces
    prefix: sched
    count: 2
    namespaceTemplatePath: templates/namespace-with-labels.yaml
  - opcode: createPods
    countParam: $initPods
    podTemplatePath: templates/pod-low-priority.yaml
    namespace: sched-0
  - opcode: barrier
    stageRequirement: Attempted
  - opcode: churn
    mode: create
    templatePaths: [templates/pod-default.yaml]
    intervalMilliseconds: 100
    number: 2
  - opcode: startCollectingMetrics
    name: m
    namespaces: [sched-1]
  - opcode: createPods
    countParam: $measurePods
    podTemplatePath: templates/pod-with-pod-affinity.yaml
    namespace: sched-1
  - opcode: createPods
    count: 2
    podTemplatePath: templates/pod-high-priority.yaml
    namespace: sched-1
  - opcode: sleep
    durationParam: $sleep
  - opcode: stopCollectingMetrics
  - opcode: deletePods
    namespace: sched-0
    deletePodsPerSecond: 10
  workloads:
  - name: small
    labels: [performance, short]
    threshold: 5
    featureGates: {SchedulerPopFromBackoffQ: true}
    params: {initNodes: 4, initPods: 3, measurePods: 5, sleep: 100ms}
"""


def templates() -> dict[str, str]:
    names = ["node-default.yaml", "pod-default.yaml", "pod-with-pod-affinity.yaml", "pod-low-priority.yaml",
             "pod-high-priority.yaml", "namespace-with-labels.yaml"]
    return {f"templates/{n}": (TEMPLATES / n).read_text() for n in names}


def run(doc: Any, files: dict[str, str]) -> list:
    """Parse and run ``doc``: the workloads' results. PerfConfigError when refused at parsing;
    anything else propagates."""
    previous = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = parse_perf_config(doc, source="cfg.yaml", templates=files)
            return run_perf(config, label_filter=None).results
    finally:
        if previous is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def names_the_field(message: str, path: tuple) -> bool:
    """``message`` names the mutated field, one inside it, one enclosing it below the test case,
    or (for a workload parameter) the parameter."""
    # the field itself or one inside it (its text is a prefix of theirs), or one enclosing it
    # below the whole test case
    enclosing = [path_text(path[:n]) for n in range(len(path), 1, -1)] or [path_text(path)]
    if any(text in message for text in enclosing):
        return True
    if len(path) == 4 and path[3] == "params":  # the op that reads a parameter no longer there
        return "is undefined (workload params:" in message
    # (0, "workloads", 0, "params", name): the op that reads it is named, with the parameter
    return len(path) >= 5 and path[3] == "params" and any(f"parameter {ref}" in message
                                                          for ref in (path[4], f"${path[4]}"))


def outcome(doc: Any, files: dict[str, str], path: tuple, bad: Any, *, delete: bool = False
            ) -> tuple[str, str | None]:
    mutant = copy.deepcopy(doc)
    if delete:
        del get(mutant, path[:-1])[path[-1]]
    else:
        get(mutant, path[:-1])[path[-1]] = copy.deepcopy(bad)
    try:
        results = run(mutant, files)
    except Hang:
        return "hang", f"no result in {PER_MUTANT_SECONDS}s"
    except PerfConfigError as error:
        return ("refused", None) if names_the_field(str(error), path) else ("unnamed", str(error))
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for (FastschedErrors included)
        return "crash", f"{type(exc).__name__}: {exc}"
    for result in results:
        if result.status not in ("passed", "below-threshold", "skipped", "failed"):
            return "crash", f"status {result.status!r}"
        if result.status == "failed":
            # a failure names the field, or the object the API server refused, or what timed out
            if not (names_the_field(result.reason, path) or " is invalid: " in result.reason
                    or "timed out" in result.reason or "are defined on workload" in result.reason):
                return "unnamed", result.reason
    return "ran", None


def test_the_unmutated_config_passes():
    (result,) = run(yaml.safe_load(CONFIG), templates())
    assert result.status == "passed", result.reason
    assert result.pods_scheduled == result.pods_created > 10


def test_single_field_mutants_are_refused_at_the_field_or_run_to_a_reported_result():
    setting = os.environ.get("FASTSCHED_FUZZ_MUTANTS", str(DEFAULT_SAMPLE))
    doc, files = yaml.safe_load(CONFIG), templates()
    mutants = [(path, label, bad) for path in paths(doc) for label, bad in BAD_VALUES]
    mutants = sample(mutants, None if setting == "all" else int(setting))
    tally: dict[str, int] = {}
    bad_ones: list[str] = []
    for path, label, value in mutants:
        kind, detail = outcome(doc, files, path, value)
        tally[kind] = tally.get(kind, 0) + 1
        if kind not in ("ran", "refused"):
            bad_ones.append(f"{path_text(path)} = {label}: {kind}: {detail}")
    assert not bad_ones, f"{len(bad_ones)} of {len(mutants)} mutants:\n" + "\n".join(bad_ones[:30])
    assert tally.get("ran", 0) > 0 and tally.get("refused", 0) > 0, tally


def test_every_field_deleted_is_refused_at_the_field_or_runs_to_a_reported_result(monkeypatch):
    """Each key of the config left out, one at a time (all ~60: Go's decoder gives a missing
    field its zero value). Found: a labelNodePrepareStrategy without labelKey was a KeyError."""
    # most mutants run: the full collection before each measured op (upstream's runtime.GC) would
    # be most of their CPU in a big test process, and is nothing this fuzz looks at
    monkeypatch.setattr("fastsched.perf.ops.gc.collect", lambda *a: 0)
    doc, files = yaml.safe_load(CONFIG), templates()
    keys = [path for path in paths(doc) if isinstance(get(doc, path[:-1]), dict)]
    bad_ones = []
    for path in keys:
        kind, detail = outcome(doc, files, path, None, delete=True)
        if kind not in ("ran", "refused"):
            bad_ones.append(f"{path_text(path)} deleted: {kind}: {detail}")
    assert not bad_ones, f"{len(bad_ones)} of {len(keys)} mutants:\n" + "\n".join(bad_ones[:30])


def test_a_label_strategy_without_its_key_fails_the_workload_as_the_api_server_refuses_the_patch():
    """Upstream patches each node with ``{"metadata":{"labels":{"<labelKey>":"<value>"}}}``; a
    missing labelKey is "" there, which the API server's label validation refuses (as any key
    that is no qualified name)."""
    doc = yaml.safe_load(CONFIG)
    del doc[0]["workloadTemplate"][0]["labelNodePrepareStrategy"]["labelKey"]
    (result,) = run(doc, templates())
    assert result.status == "failed"
    assert result.reason.startswith("op 0 (createNodes): ")
    # (and the name part's regex error: IsQualifiedName gives both for "")
    assert ' is invalid: [metadata.labels: Invalid value: "": name part must be non-empty, ' in result.reason


def _results(path: tuple, bad: Any) -> list:
    doc = yaml.safe_load(CONFIG)
    get(doc, path[:-1])[path[-1]] = bad
    return run(doc, templates())


def test_a_count_beyond_go_int_is_refused_at_decoding():
    try:
        _results((0, "workloadTemplate", 1, "count"), 2 ** 63)
    except PerfConfigError as error:
        assert "[0].workloadTemplate[1].count: cannot unmarshal number 9223372036854775808" in str(error)
    else:
        raise AssertionError("a count of 2**63 was accepted")


def test_a_parameter_that_is_no_int_fails_the_workload_naming_it():
    for bad in (2 ** 63, float("inf")):
        (result,) = _results((0, "workloads", 0, "params", "initNodes"), bad)
        assert result.status == "failed"
        assert "[0].workloadTemplate[0].countParam: parameter initNodes" in result.reason
        assert "does not fit an int" in result.reason


def test_an_invalid_namespace_fails_the_workload_instead_of_escaping():
    (result,) = _results((0, "workloadTemplate", 2, "namespace"), "Not_A_Label")
    assert result.status == "failed"
    assert result.reason.startswith('op 2 (createPods): Namespace "Not_A_Label" is invalid: ')


def test_a_missing_churn_template_is_named_at_its_entry():
    try:
        results = _results((0, "workloadTemplate", 4, "templatePaths", 0), "templates/nope.yaml")
    except FastschedError as error:  # noqa: F841 - either way the entry is named
        message = str(error)
    else:
        (result,) = results
        assert result.status == "failed"
        message = result.reason
    assert "[0].workloadTemplate[4].templatePaths[0]: template file not found: templates/nope.yaml" in message
