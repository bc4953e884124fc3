"""Mutation fuzz of the PersistentVolume and PersistentVolumeClaim templates a createPods op reads
(``persistentVolumeTemplatePath``/``persistentVolumeClaimTemplatePath``, upstream's
CreatePodWithPersistentVolume): each field of v1.37.2's pv-aws.yaml and pvc.yaml replaced by one
of the manifest fuzz's bad values, or left out. Each mutant must run to a reported result (passed,
or failed saying why: naming the template, or the object the API server refused), never another
exception. What it found first: a claim template whose ``spec`` is no object was a TypeError, and
a template of the other kind an AssertionError (internal errors on the command line); upstream
decodes each into its type (``getSpecFromFile``, strict) and fails the op on an error.
"""
from __future__ import annotations

import copy
import os
import warnings
from pathlib import Path

import yaml

from fastsched.perf import PerfConfigError, parse_perf_config, run_perf
from tests.api.test_mutation_fuzz import BAD_VALUES, get, path_text, paths

TEMPLATES = Path(__file__).parent / "data" / "upstream-v1.37.2" / "templates"
PV, PVC = "templates/pv-aws.yaml", "templates/pvc.yaml"

CONFIG = """\
- name: InTreePVs
  defaultPodTemplatePath: templates/pod-default.yaml
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 2
    persistentVolumeTemplatePath: templates/pv-aws.yaml
    persistentVolumeClaimTemplatePath: templates/pvc.yaml
    collectMetrics: true
  workloads:
  - name: small
    labels: [performance]
"""


def _files(pv: object, pvc: object) -> dict[str, str]:
    return {PV: yaml.safe_dump(pv), PVC: yaml.safe_dump(pvc),
            "templates/pod-default.yaml": (TEMPLATES / "pod-default.yaml").read_text()}


def _outcome(pv: object, pvc: object, template: str) -> str | None:
    """None when the mutant ran to a reported result; else what went wrong."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = parse_perf_config(yaml.safe_load(CONFIG), source="cfg.yaml", templates=_files(pv, pvc))
            (result,) = run_perf(config, label_filter=None).results
    except PerfConfigError as exc:  # (the templates are read when the op runs: not expected)
        return None if template in str(exc) else f"PerfConfigError: {exc}"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return f"{type(exc).__name__}: {exc}"
    if result.status == "failed" and not (template in result.reason or " is invalid" in result.reason):
        return f"failed, naming neither the template nor the object: {result.reason}"
    if result.status not in ("passed", "failed"):
        return f"status {result.status}"
    return None


def _template(name: str) -> dict:
    return yaml.safe_load((TEMPLATES / Path(name).name).read_text())


def test_the_unmutated_templates_pass(monkeypatch):
    monkeypatch.setattr("fastsched.perf.ops.gc.collect", lambda *a: 0)  # (see below)
    config = parse_perf_config(yaml.safe_load(CONFIG), source="cfg.yaml", templates=_files(_template(PV), _template(PVC)))
    (result,) = run_perf(config, label_filter=None).results
    assert result.status == "passed" and result.pods_scheduled == 2, result.reason


def test_every_field_of_the_volume_templates_mutated_runs_to_a_reported_result(monkeypatch):
    """By default each field gets one bad value (in turn) and is left out once (~40 mutants, ~3 s
    of CPU); ``FASTSCHED_FUZZ_MUTANTS=all`` gives each field every bad value (~300)."""
    every = os.environ.get("FASTSCHED_FUZZ_MUTANTS") == "all"
    # the full collection before the measured op (upstream's runtime.GC) is most of each run's
    # CPU in a big test process, and nothing this fuzz looks at
    monkeypatch.setattr("fastsched.perf.ops.gc.collect", lambda *a: 0)
    bad_ones = []
    count = 0
    for which in (PV, PVC):
        doc = _template(which)
        for n, path in enumerate(paths(doc)):
            values = BAD_VALUES if every else [BAD_VALUES[(n * 5 + len(which)) % len(BAD_VALUES)]]
            for label, bad in [*values, ("deleted", ...)]:
                mutant = copy.deepcopy(doc)
                if bad is ...:
                    del get(mutant, path[:-1])[path[-1]]
                else:
                    get(mutant, path[:-1])[path[-1]] = copy.deepcopy(bad)
                pv, pvc = (mutant, _template(PVC)) if which == PV else (_template(PV), mutant)
                count += 1
                problem = _outcome(pv, pvc, which)
                if problem is not None:
                    bad_ones.append(f"{which}: {path_text(path)} = {label}: {problem}")
    assert not bad_ones, f"{len(bad_ones)} of {count} mutants:\n" + "\n".join(bad_ones[:30])
