"""The README's code runs as written, its commands are the ones CI runs, and its links lead into the site."""
import re
from pathlib import Path

import pytest

from fastsched.api import ManifestWarning

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_states_the_upstream_version_and_commands():
    text = README.read_text()
    assert "kube-scheduler v1.37" in text
    assert 'pip install -e ".[test]"' in text
    (test_command,) = re.findall(r"^(python -m pytest[^#\n]*?)\s*# the test suite", text, flags=re.M)
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci and test_command + " " in ci  # the README's command, as written


def test_readme_main_command_runs_on_the_site():
    """The README's third command is marked not run there; the site's simulations page runs it."""
    assert "fastsched simulate --out report " in README.read_text()
    guide = (ROOT / "docs" / "guide" / "simulations.md").read_text()
    runnable = re.search(r"\n```bash\n(.*?)```", guide, flags=re.S)  # the page's first block: not marked skip
    assert runnable and "fastsched simulate --out report " in runnable.group(1)
    assert "docs-test: skip" not in guide[:runnable.start()]


def test_usage_example_runs_on_the_shipped_examples(monkeypatch, capsys):
    (block,) = [b for b in python_blocks() if 'sched.add("examples/cluster.yaml")' in b]
    monkeypatch.chdir(README.parent)
    ns: dict = {}
    with pytest.warns(ManifestWarning, match=r"kinds fastsched does not model: ConfigMap \(1\)"):
        exec(compile(block, "README.md", "exec"), ns)
    out = capsys.readouterr().out
    assert "Scheduled" in out and "Unschedulable" not in out
    assert len(ns["api_pods"]) == 6 and all(p["spec"].get("nodeName") for p in ns["api_pods"])


def test_readme_is_a_front_page_linking_into_the_site():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert "docs/getting-started.md" in local and "docs/reference/api/index.md" in local
    for link in local:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"
    # every page of the site but the home page, the includes and the API pages (the API index leads there)
    # (docs/dev: the maintainers' design notes, not pages of the site: mkdocs.yml excludes them)
    site = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")
            if (p.parent != ROOT / "docs" / "reference" / "api" or p.name == "index.md")
            and ROOT / "docs" / "dev" not in p.parents}
    site -= {"docs/index.md", "docs/benchmarks.md", "docs/changelog.md"}
    assert not site - set(local), f"pages of the site the README does not lead to: {sorted(site - set(local))}"
