"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing from
the nav or an API reference to an object that no longer exists fails the test suite (and CI)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "pymdownx")

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name.split(".")[0]) is None for name in NEEDED),
    reason="the site's tools are not installed: pip install -e '.[docs]' (the [test] extra has them)")


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2.0
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, capture_output=True, text=True,
                          env=env, timeout=600)


def test_site_builds_strictly(tmp_path):
    run = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout[-3000:]}{run.stderr[-5000:]}"
    for page in ("index.html", "getting-started/index.html", "reference/api/scheduler/index.html",
                 "benchmarks/index.html", "changelog/index.html"):
        assert (tmp_path / "site" / page).stat().st_size > 0, page
    api = (tmp_path / "site" / "reference" / "api" / "scheduler" / "index.html").read_text()
    assert "fastsched.scheduler.Scheduler" in api and "fork" in api      # rendered from the docstrings
    # BENCHMARKS.md included: its run's JSON file name, which the page names whatever its figures
    results = sorted((ROOT / "benchmarks" / "results").glob("*.json"))[-1].name
    assert results in (tmp_path / "site" / "benchmarks" / "index.html").read_text()


@pytest.mark.parametrize("defect, message", [
    ("[a page that is not there](no-such-page.md)", "no-such-page.md"),
    ("::: fastsched.no_such_module", "fastsched.no_such_module"),
])
def test_strict_build_fails_on_a_broken_link_or_a_renamed_object(tmp_path, defect, message):
    """A site with the same configuration and one defect must fail to build."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["nav"] = [{"Home": "index.md"}, {"Defect": "defect.md"}]       # not the API pages: quicker
    python = config["plugins"][1]["mkdocstrings"]["handlers"]["python"]
    python["paths"] = [str(ROOT)]
    python["options"]["extensions"] = [str(ROOT / e) if e.startswith("docs/") else e
                                       for e in python["options"].get("extensions", [])]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "docs" / "defect.md").write_text(f"# Defect\n\n{defect}\n")
    run = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert run.returncode != 0 and message in run.stdout + run.stderr, run.stderr[-3000:]
