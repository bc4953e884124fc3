"""Hostile YAML fed to every file loader: nesting deeper than the pure-Python parser recurses, a
recursive alias, an alias bomb, and a document that is not a map; each must be refused with the
loader's FastschedError (its file and what is wrong), never a RecursionError or a hang.
(The manifest loader reads with libyaml, which bounds nesting itself; it is checked here too.)"""
from __future__ import annotations

import pytest

from fastsched.api import load_objects
from fastsched.config import load_config
from fastsched.errors import FastschedError
from fastsched.perf.config import load_perf_config
from fastsched.sim.scenario import Scenario
from fastsched.sim.sweep import load_sweep
from fastsched.util.yamlsafe import structure_problem

#: deeper than the loaders take (the parser itself recurses past its limit at ~500 levels: one case)
DEEP = "[" * 200 + "]" * 200

CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: {}\n"
SCENARIO = "name: s\nduration: 10s\ncluster:\n  nodes: {}\n"
PERF = "- name: t\n  workloadTemplate: {}\n"
SWEEP = "scenario: {}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {}\nspec:\n  containers: [{{name: c, image: i}}]\n"

BAD = {
    "deep": DEEP,
    "recursive alias": "&r [*r]",
    "recursive map": "&r {a: *r}",
}


def _bomb(template: str) -> str:
    """An alias bomb in the template's slot: 10 anchors, each listing the previous one ten times
    (10^10 values once expanded)."""
    anchors = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    anchors += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    return template.format("{" + ", ".join(anchors) + "}")


LOADERS = {
    "config": (CONFIG, lambda text, tmp: load_config(text)),
    "manifest": (POD, lambda text, tmp: load_objects(text)),
    "scenario": (SCENARIO, lambda text, tmp: Scenario.load(_file(tmp, "s.yaml", text), base_dir=tmp)),
    "perf": (PERF, lambda text, tmp: load_perf_config(_file(tmp, "performance-config.yaml", text))),
    "sweep": (SWEEP, lambda text, tmp: load_sweep(_file(tmp, "sweep.yaml", text), base_dir=tmp)),
}


def _file(tmp, name, text):
    path = tmp / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("bad", [*BAD, "bomb"])
@pytest.mark.parametrize("loader", list(LOADERS))
def test_hostile_yaml_is_refused_by_every_loader(loader, bad, tmp_path):
    template, load = LOADERS[loader]
    value = _bomb(template) if bad == "bomb" else template.format(BAD[bad])
    with pytest.raises(FastschedError):
        load(value, tmp_path)


def test_nesting_past_the_parsers_recursion():
    with pytest.raises(FastschedError, match="invalid YAML: nested deeper than 100 levels"):
        load_config(CONFIG.format("[" * 700 + "]" * 700))


def test_structure_problem_names_each_shape():
    import yaml
    assert structure_problem(yaml.safe_load("a: {b: [1, 2, {c: d}]}")) is None
    shared = yaml.safe_load("a: &x [1, 2]\nb: *x\nc: *x")  # shared, not recursive: fine
    assert structure_problem(shared) is None
    assert structure_problem(yaml.safe_load("&r [*r]")) == "a recursive alias (an anchor used inside its own value)"
    assert structure_problem(yaml.safe_load("[" * 150 + "]" * 150)) == "nested deeper than 100 levels"
    assert structure_problem(yaml.safe_load("[" * 100 + "]" * 100)) is None
    bomb = yaml.safe_load("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)))
    assert structure_problem(bomb) == "aliases expand it to more than 2,000,000 values"
