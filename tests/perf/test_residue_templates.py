"""createPods' pods made by name per residue of the index (``fastsched.perf.indexed.ResiduePlan``,
``WorkloadOps._residue_factory``) against rendering and parsing every pod's text: seeded random
templates (names, ``Mod`` calls, the index printed elsewhere, pipelines, quoting), and whole
workloads run both ways."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
import yaml

from fastsched.perf import load_perf_config, ops as perf_ops, run_workload
from fastsched.perf.gotemplate import Template, TemplateError
from fastsched.perf.indexed import residue_plan

UPSTREAM = Path("/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2/test/integration/scheduler_perf")
VENDORED = Path(__file__).parent / "data" / "upstream-v1.37.2"
ROOT = UPSTREAM if UPSTREAM.is_dir() else VENDORED
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

NAMES = ["test-{{.Index}}", "p{{.Index}}-x", "a{{.Index}}b{{.Index}}", "'q-{{.Index}}'", "{{.Index}}",
         "n{{.Index}}.5", "x-{{Mod .Index 7}}-{{.Index}}", "{{.Index}}-{{.klass}}", "y{{.Index}}"]
VALUES = ["{{.klass}}-{{Mod .Index .classes}}", "{{Mod .Index 3}}", "fixed", "{{.Index}}",
          "{{Mod .Index .classes | printf \"%d\"}}", "v-{{Mod .Index .Index}}", "{{Mod .Index .missing}}",
          "{{Mod .Index 0}}", "{{AddInt .Index 1}}"]


def _template(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", f"  name: {name}"]
    if rng.random() < 0.3:
        lines += ["  labels:", f"    app: {rng.choice(VALUES)}"]
    lines += ["spec:", "  containers:", "  - image: registry.k8s.io/pause:3.9", "    name: pause",
              "    resources:", "      requests:"]
    keys = rng.sample(["example.com/r-{{Mod .Index .classes}}", "cpu", "example.com/{{.klass}}"], rng.randint(1, 2))
    amounts = [f"        {key}: {rng.choice(['1', '{{Mod .Index 2}}', '2'])}" for key in keys]
    lines += amounts
    lines += ["      limits:", *amounts]  # (extended resources need their limits)
    return "\n".join(lines) + "\n"


def _parse(text: str):
    return yaml.load(text, Loader=_LOADER)


@pytest.mark.parametrize("seed", range(60))
def test_name_parts_are_the_rendered_names(seed):
    """Where a plan answers for a residue, every index of that residue renders to the text of the
    residue's first index but for ``metadata.name``, which is the kept parts joined by the index."""
    rng = random.Random(seed)
    text = _template(rng)
    template = Template(text)
    env = {"klass": rng.choice(["gpu", "fpga"]), "classes": rng.choice([1, 3, 25]), "Count": 10}
    plan = residue_plan(template)
    if plan is None:
        return
    first: dict[tuple, tuple] = {}
    for i in [*range(60), 99, 100, 101, 999, 1000, 12345]:
        e = {**env, "Index": i}
        try:
            residues = plan.residues(e)
            rendered = template.execute(e)
        except (TemplateError, ValueError, TypeError):
            continue
        if residues not in first:
            first[residues] = (i, plan.name_parts(template, e, residues))
        i0, parts = first[residues]
        if parts is None:
            continue
        doc = _parse(rendered)
        doc0 = _parse(template.execute({**env, "Index": i0}))
        name = str(i).join(parts[0])
        if parts[1] and isinstance(doc["metadata"]["name"], str):
            assert doc["metadata"]["name"] == name, (text, i)
        doc["metadata"]["name"] = doc0["metadata"]["name"] = None
        assert doc == doc0, (text, i, i0)


def test_the_extended_resource_pod_template_gets_a_plan():
    template = Template((ROOT / "dra" / "templates" / "pod-with-extended-resource.yaml").read_text())
    plan = residue_plan(template)
    assert plan is not None and plan.prints == 1 and len(plan.mods) == 1
    env = {"class": "example.com/gpu", "classes": 25, "Count": 5, "Index": 26}
    assert plan.residues(env) == (1,)
    assert plan.name_parts(template, env, (1,)) == (("test-dra-", ""), True)


@pytest.mark.parametrize("text", [
    "metadata:\n  name: a-{{.Index}}\n  labels:\n    i: x{{.Index}}\n",  # the index beyond the name
    "metadata:\n  name: a-{{.Index | printf \"%d\"}}\n",                 # a pipeline
    "metadata:\n  name: a-{{AddInt .Index 1}}\n",                         # another function
    "metadata:\n  name: a-{{Mod .Index .Index}}-{{.Index}}\n",            # Mod by the index
    "metadata:\n  name: fixed-{{Mod .Index 3}}\n",                        # no print of the index
    "{{if .Index}}metadata:\n  name: a-{{.Index}}\n{{end}}",             # not flat
])
def test_no_plan(text):
    template = Template(text)
    plan = residue_plan(template)
    if plan is None:
        return
    env = {"Index": 4, "Count": 1}
    assert plan.name_parts(template, env, plan.residues(env)) is None


#: fields set from the run's clock (wall time here): they differ between any two runs
_CLOCK_FIELDS = ("start_time", "creation_timestamp")


def _pods(sched):
    out = []
    for p in sched.cluster.pods.values():
        fields = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)
                  if f.name not in ("manifest", *_CLOCK_FIELDS)}
        manifest = {**p.manifest, "metadata": {k: v for k, v in (p.manifest.get("metadata") or {}).items()
                                               if k != "creationTimestamp"}}
        status = manifest.get("status")
        if isinstance(status, dict):
            manifest["status"] = {k: v for k, v in status.items() if k != "startTime"}
        out.append((p.namespace, p.name, repr(sorted(fields.items(), key=lambda kv: kv[0])), repr(manifest)))
    return sorted(out)


def _run_both(config, test_case, workload, monkeypatch):
    calls = []
    real = perf_ops.WorkloadOps._residue_factory

    def counting(self, *a, **k):
        made = real(self, *a, **k)
        calls.append(made is not None)
        return made

    monkeypatch.setattr(perf_ops.WorkloadOps, "_residue_factory", counting)
    fast = run_workload(config, test_case, workload, keep_scheduler=True)
    monkeypatch.setattr(perf_ops, "_RESIDUE_FACTORIES", False)
    slow = run_workload(config, test_case, workload, keep_scheduler=True)
    assert (fast.status, fast.reason) == (slow.status, slow.reason)
    return calls, _pods(fast.scheduler), _pods(slow.scheduler)


@pytest.mark.parametrize("workload", ["fast", "Explicit_25classes_2000pods_200nodes",
                                      "Implicit_25classes_2000pods_200nodes"])
def test_extended_resource_runs_make_the_pods_and_placements_of_rendering(workload, monkeypatch):
    """dra/extendedresource: the pods made by name (all but the first of each class) and where
    they go are those of rendering every pod (the measured op shares the init op's entries)."""
    config = load_perf_config(ROOT / "dra" / "extendedresource" / "performance-config.yaml")
    if workload != "fast":
        tc = config.test_case("ExtendedResource")
        w = next(w for w in tc.workloads if w.name == workload)
        workload = dataclasses.replace(w, params={**w.params, "nodesWithDRA": 20, "initPods": 40,
                                                  "measurePods": 60})
    calls, fast, slow = _run_both(config, "ExtendedResource", workload, monkeypatch)
    assert fast == slow and len(fast) >= 10
    assert all(pod[0] in ("init", "test") for pod in fast)
    assert any(calls)  # the fast path ran


@pytest.mark.parametrize("seed", range(12))
def test_random_templates_make_the_pods_of_rendering(seed, tmp_path, monkeypatch):
    """A workload over a seeded random pod template: the same pods (every field, the manifest)
    with and without the pods made by name."""
    rng = random.Random(1000 + seed)
    while True:
        text = _template(rng)
        try:
            Template(text).execute({"klass": "gpu", "classes": 3, "Index": 0, "Count": 1})
            doc = _parse(Template(text).execute({"klass": "gpu", "classes": 3, "Index": 5, "Count": 1}))
        except (TemplateError, yaml.YAMLError, ValueError):
            continue
        if isinstance(doc["metadata"]["name"], str) and "." not in doc["metadata"]["name"]:
            break
    (tmp_path / "pod.yaml").write_text(text)
    (tmp_path / "node.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  generateName: node-\nstatus:\n  capacity:\n"
        "    cpu: '100'\n    memory: 100Gi\n    pods: '300'\n    example.com/r-0: '50'\n    example.com/r-1: '50'\n"
        "    example.com/r-2: '50'\n    example.com/gpu: '50'\n")
    (tmp_path / "config.yaml").write_text(
        "- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    countParam: $nodes\n    nodeTemplatePath: node.yaml\n"
        "  - opcode: createPods\n    countParam: $pods\n    podTemplatePath: pod.yaml\n"
        "    templateParams:\n      klass: gpu\n      classes: 3\n    collectMetrics: true\n"
        "  workloads:\n  - name: w\n    params:\n      nodes: 3\n      pods: 14\n")
    config = load_perf_config(tmp_path / "config.yaml")
    _calls, fast, slow = _run_both(config, "T", "w", monkeypatch)
    assert fast == slow
