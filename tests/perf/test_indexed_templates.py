"""A template parsed once for every Index (``fastsched.perf.indexed``) against rendering and parsing
each text: on every template of upstream's v1.37.2 scheduler_perf, with the parameters its configs
give it, and on templates written to break the plan's conditions."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fastsched.api.schema import TYPED_YAML_KINDS, typed_yaml
from fastsched.perf import load_perf_config
from fastsched.perf.gotemplate import Template, TemplateError
from fastsched.perf.indexed import SENTINEL, index_plan, prints_index_only
from fastsched.util.goyaml import GoYAMLTypedLoader

UPSTREAM = Path("/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2/test/integration/scheduler_perf")
VENDORED = Path(__file__).parent / "data" / "upstream-v1.37.2"
ROOT = UPSTREAM if UPSTREAM.is_dir() else VENDORED
INDICES = [0, 1, 2, 7, 9, 10, 11, 30, 59, 60, 99, 100, 101, 999, 1000, 4999, 5000, 12345, 100000]


def _parse(text: str, kind: str | None):
    """The document upstream's yaml.UnmarshalStrict hands encoding/json: into a typed ``kind``
    (numbers and bools in string fields as text), or untyped."""
    return typed_yaml(yaml.load(text, Loader=GoYAMLTypedLoader), kind)


def _kind(text: str) -> str | None:
    doc = yaml.load(text, Loader=GoYAMLTypedLoader)
    kind = doc.get("kind") if isinstance(doc, dict) else None
    return kind if kind in TYPED_YAML_KINDS else None


def _template_params() -> dict[Path, list[dict]]:
    """Each template file of the configs -> the templateParams its ops give it (resolved per
    workload), plus the bare environment for templates no op names."""
    out: dict[Path, list[dict]] = {p: [] for p in ROOT.glob("**/templates/*.yaml")}
    for config_path in ROOT.glob("**/performance-config.yaml"):
        config = load_perf_config(config_path)
        for tc in config.test_cases:
            for w in tc.workloads:
                try:
                    ops = tc.ops_for(w).ops
                except Exception:  # noqa: BLE001 - a workload that does not resolve is not ours to test
                    continue
                for op in ops:
                    for field in ("templatePath", "podTemplatePath", "nodeTemplatePath"):
                        rel = op.fields.get(field)
                        if rel:
                            path = (config_path.parent / rel).resolve()
                            params = dict(op.fields.get("templateParams") or {})
                            if params not in out.setdefault(path, []):
                                out[path].append(params)
    return out


PARAMS = _template_params()
TEMPLATES = sorted(p for p in PARAMS if p.parent.name == "templates")


def _check(template: Template, env: dict) -> str:
    """'plan' / 'no plan': the plan's documents equal the rendered texts' parses for every index
    where it answers."""
    if not prints_index_only(template):
        return "no plan"
    try:
        sentinel_text = template.execute({**env, "Index": SENTINEL})
    except TemplateError:
        return "no plan"
    try:
        kind = _kind(sentinel_text)
    except yaml.YAMLError:
        return "no plan"
    plan = index_plan(sentinel_text, convert=lambda doc: typed_yaml(doc, kind))
    if plan is None:
        return "no plan"
    answered = 0
    for i in INDICES:
        expect = _parse(template.execute({**env, "Index": i}), kind)
        got = plan.document(i)
        if got is not None:
            answered += 1
            assert got == expect, i
            assert [type(v) for v in _leaves(got)] == [type(v) for v in _leaves(expect)], i
            assert _key_order(got) == _key_order(expect), i
    return "plan" if answered else "no answers"


def _leaves(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from _leaves(v)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


def _key_order(x):
    if isinstance(x, dict):
        return [(k, _key_order(v)) for k, v in x.items()]
    if isinstance(x, list):
        return [_key_order(v) for v in x]
    return None


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_upstream_template_parses_as_rendered(path):
    template = Template(path.read_text(), path.name)
    for params in PARAMS[path] or [{}]:
        try:
            template.execute({**params, "Index": 0, "Count": 10})
        except TemplateError:
            continue  # parameters it needs come from a workload not resolved here
        _check(template, {**params, "Count": 10})


def test_the_templates_that_print_the_index_get_a_plan():
    planned = set()
    for path in TEMPLATES:
        template = Template(path.read_text(), path.name)
        for params in PARAMS[path] or [{}]:
            try:
                if _check(template, {**params, "Count": 10}) == "plan":
                    planned.add(str(path.relative_to(ROOT)))
            except TemplateError:
                pass
    assert "misc/templates/pod-with-extended-resource.yaml" in planned
    # the podgroup pods read Index through Mod: rendered, not planned
    assert "dra/templates/pod-in-podgroup-with-claim-ref.yaml" not in planned
    assert len(planned) >= 10, sorted(planned)


@pytest.mark.parametrize("text, planned", [
    ("value: {{.Index}}\n", True),                          # an int
    ("value: '{{.Index}}'\n", True),                        # a string
    ('value: "a-{{.Index}}"\n', True),
    ("value: {{.Index}}:30\n", True),                        # sexagesimal for 0-59 only: per index
    ("value: 0{{.Index}}\n", True),                          # octal 0-7 digits, else a string/float
    ("value: {{.Index}}.5\n", True),                         # a float: the plan declines
    ("value: 1e{{.Index}}\n", True),
    ("a-{{.Index}}: x\na-5: y\n", True),                     # keys that collide at 5
    ("m:\n  k-{{.Index}}:\n    j-{{.Index}}: {{.Index}}\n", True),
    ("value: |\n  line {{.Index}}\n  more\n", True),
    ("value: >\n  folded {{.Index}}\n  more\n", True),
    ("list: [a-{{.Index}}, {{.Index}}, 'q{{.Index}}']\n", True),
    ('value: "\\x4{{.Index}}"\n', False),                    # an escape reads the digits
    ("value: !!str {{.Index}}\n", False),                    # a tag
    ("a: &x v-{{.Index}}\nb: *x\n", False),                  # an anchor
    ("value: x  # {{.Index}}\n", False),                     # outside any scalar
    ("value: {{Mod .Index 3}}\n", False),                    # a function of the index
    ("{{if eq .Index 0}}value: a{{else}}value: b{{end}}\n", False),
    ("{{with .Count}}value: {{$.Index}}{{end}}\n", False),
    ("value: {{.Index}}{{.Index}}\n", True),
    # typed into a Pod: an int in a string field is its text, in an int field an int
    ("kind: Pod\nmetadata:\n  labels:\n    index: {{.Index}}\n    k{{.Index}}: {{.Index}}\n", True),
    ("kind: Pod\nspec:\n  priority: {{.Index}}\n  nodeName: {{.Index}}\n", True),
    ("kind: Pod\nmetadata:\n  labels:\n    x: 0b{{.Index}}\n", True),   # a string or an int by the digits
    ("kind: Pod\nmetadata:\n  name: y\n  labels:\n    a: yes\n    b: {{.Index}}\n", True),
])
def test_plan_conditions(text, planned):
    assert (_check(Template(text), {"Count": 1}) != "no plan") == planned


def test_the_plan_gives_an_int_slot_in_a_string_field_as_text():
    text = "kind: Pod\nmetadata:\n  labels:\n    index: {{.Index}}\nspec:\n  priority: {{.Index}}\n"
    plan = index_plan(Template(text).execute({"Index": SENTINEL}), convert=lambda doc: typed_yaml(doc, "Pod"))
    doc = plan.document(12)
    assert doc["metadata"]["labels"] == {"index": "12"} and doc["spec"]["priority"] == 12


@pytest.mark.parametrize("workload", ["fast_DRAExtendedResourceEnabled", "500pods_500nodes_DRAExtendedResourceEnabled"])
def test_a_run_with_the_plan_makes_the_pods_and_placements_of_rendering(workload, monkeypatch):
    """SchedulingWithExtendedResource (``foo.com/bar-{{.Index}}`` in the pods' requests and
    limits): the pods made from the plan and where they go are those of rendering each text."""
    from fastsched.perf import indexed, run_workload

    config = load_perf_config(VENDORED / "misc" / "performance-config.yaml")
    planned: list[int] = []
    real_plan = indexed.index_plan

    def counting(text, *a, **k):
        plan = real_plan(text, *a, **k)
        planned.append(plan is not None)
        return plan

    def outcome():
        r = run_workload(config, "SchedulingWithExtendedResource", workload, keep_scheduler=True)
        assert r.status == "passed", r.reason
        pods = list(r.scheduler.cluster.pods.values())
        return sorted((p.namespace, p.name, p.node_name, dict(p.requests), repr(p.containers)) for p in pods)

    monkeypatch.setattr(indexed, "index_plan", counting)
    with_plan = outcome()
    assert planned and all(planned)
    monkeypatch.setattr(indexed, "index_plan", lambda text, *a, **k: None)
    rendered = outcome()
    assert with_plan == rendered and len(rendered) >= 10
