"""PodFactory.make's field copy of the template against the constructor it replaces, and the
inline name draws against ``random.Random.choice``."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from fastsched.api import Pod
from fastsched.api.names import NAME_ALPHABET, NameGenerator
from fastsched.api.objects import _stored_fields
from fastsched.sim.generators import PodFactory

TEMPLATES = Path(__file__).parents[1] / "perf" / "data" / "upstream-v1.37.2" / "templates"
#: the fields a made pod does not share with its template
IDENTITY = {"name", "namespace", "uid", "labels", "node_name"}

#: a template with every field __post_init__ or make treats specially set
RICH = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "rich", "namespace": "team", "uid": "0000-explicit", "labels": {"app": "x"},
                 "annotations": {"a": "1"}, "finalizers": ["f/x"]},
    "spec": {"nodeSelector": {"disk": "ssd"}, "priority": 7, "overhead": {"cpu": "10m"},
             "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
             "initContainers": [{"name": "i", "image": "i", "resources": {"requests": {"cpu": "2"}}}],
             "tolerations": [{"key": "k", "operator": "Exists"}]},
}


def _templates() -> list[tuple[str, dict]]:
    out = [("rich", RICH)]
    for path in sorted(TEMPLATES.glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError:  # Go templates with actions outside scalars
            continue
        if isinstance(doc, dict) and doc.get("kind") == "Pod":
            out.append((path.name, doc))
    return out


def _constructed(factory: PodFactory):
    """``make`` through ``Pod.__init__`` (the path with_fields keeps)."""
    return factory.with_fields()


@pytest.mark.filterwarnings("ignore::fastsched.api.ManifestWarning")
def test_copy_is_the_constructed_pod_field_for_field():
    templates = _templates()
    assert len(templates) > 20  # the vendored upstream templates were found
    for what, doc in templates:
        try:
            template = Pod.from_manifest(doc)
        except Exception:  # noqa: BLE001 - templates that need their parameters rendered
            continue
        template.admitted = True
        factory = PodFactory(template)
        slow = _constructed(factory)
        for args, kwargs in [(("p-1", "ns"), {}), (("p-2", None), {"labels": {"l": "v"}}),
                             (("", "ns"), {"node_name": "n1"}), (("p-3", "ns"), {"labels": template.labels})]:
            fast, want = factory.make(*args, **kwargs), slow(*args, **kwargs)
            assert fast is not template
            for name in _stored_fields(Pod):
                got, expected = getattr(fast, name), getattr(want, name)
                if name in IDENTITY:
                    assert got == expected and type(got) is type(expected), (what, name, got, expected)
                else:  # shared with the template, as the constructor's keyword arguments are
                    assert got is expected, (what, name, got, expected)
            assert fast.requests is template.requests and fast.admitted
            assert (fast.uid == "") == (args[0] == "")


def test_copy_leaves_the_template_alone():
    template = Pod.from_manifest(RICH)
    before = {name: getattr(template, name) for name in _stored_fields(Pod)}
    PodFactory(template).make("other", "elsewhere", labels={"x": "y"}, node_name="n")
    assert {name: getattr(template, name) for name in _stored_fields(Pod)} == before


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, "s"])
def test_names_are_random_choice_draws(seed):
    gen = NameGenerator(seed)
    ref = random.Random(f"fastsched-names-{seed}")
    for length in (5, 1, 0, 13, 5, 5):
        assert gen.random_string(length) == "".join(ref.choice(NAME_ALPHABET) for _ in range(length))
    assert gen.getstate() == ref.getstate()  # forks continue the same stream
    assert gen.generate("pod-") == "pod-" + "".join(ref.choice(NAME_ALPHABET) for _ in range(5))


def test_names_from_a_random_subclass_keep_its_choice():
    class Halves(random.Random):  # overrides random() only: CPython draws without getrandbits
        def random(self):
            return 0.5

    ref = Halves(3)
    want = "".join(ref.choice(NAME_ALPHABET) for _ in range(4))
    assert NameGenerator(Halves(3)).random_string(4) == want
    assert NameGenerator(random.Random(3)).random_string(4) != want  # the inline draws would differ
