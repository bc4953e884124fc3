"""The version numbers a release states agree with each other (docs/dev/releasing.md).

A release names two versions: fastsched's own (``pyproject.toml``, ``fastsched.__version__``, a
``## X.Y.Z`` section of CHANGELOG.md) and the kube-scheduler release it follows
(``fastsched.UPSTREAM_VERSION``, the README's "Upstream version followed", the k8s.io/kubernetes
that ``oracle/go.mod`` pins and the differential oracle runs, the staging modules beside it). Each
was once edited by hand in one place and not the others; these checks fail the suite instead.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import fastsched

ROOT = Path(__file__).resolve().parents[1]


def _pinned() -> dict[str, str]:
    """Module -> the version oracle/go.mod builds with, for its k8s.io requirements: a ``replace``
    wins over the requirement (k8s.io/kubernetes requires its staging modules as v0.0.0 and every
    consumer replaces them)."""
    text = (ROOT / "oracle" / "go.mod").read_text()
    required = dict(re.findall(r"^\s*(?:require\s+)?(k8s\.io/[\w./-]+)\s+(v\S+)", text, re.M))
    replaced = dict(re.findall(r"^\s*replace\s+(k8s\.io/[\w./-]+)\s+=>\s+\S+\s+(v\S+)", text, re.M))
    return {module: replaced.get(module, version) for module, version in required.items()}


def test_fastsched_version_is_the_same_everywhere():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == fastsched.__version__
    released = re.findall(r"^## (\d+\.\d+\.\d+)\b", (ROOT / "CHANGELOG.md").read_text(), re.M)
    # the version in the package is the newest released section (work since then is Unreleased)
    assert released and released[0] == fastsched.__version__, released[:3]


def test_the_upstream_release_followed_is_the_one_the_oracle_runs():
    pinned = _pinned()
    kubernetes = pinned["k8s.io/kubernetes"]                     # e.g. v1.37.2
    minor = ".".join(kubernetes.split(".")[:2])                  # v1.37
    assert fastsched.UPSTREAM_VERSION == minor
    readme = (ROOT / "README.md").read_text()
    assert f"**Upstream version followed: kube-scheduler {kubernetes}.**" in readme
    # the staging modules are the same release: v0.37.2 beside v1.37.2
    staging = "v0" + kubernetes[2:]
    # (klog, utils and kube-openapi are versioned on their own)
    wrong = {m: v for m, v in pinned.items() if m != "k8s.io/kubernetes" and v != staging
             and not m.startswith(("k8s.io/utils", "k8s.io/kube-openapi", "k8s.io/klog"))}
    assert not wrong, f"oracle/go.mod pins staging modules of another release than {kubernetes}: {wrong}"


def test_mypy_checks_for_the_oldest_python_supported():
    """mypy's ``python_version`` is ``requires-python``'s floor, so a stdlib name newer than the floor
    (``typing.Self`` under a 3.10 floor was one) fails tests/test_types.py; and the README and the
    getting-started page state the same floor."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    floor = re.fullmatch(r">=\s*(\d+\.\d+)", data["project"]["requires-python"])
    assert floor, data["project"]["requires-python"]
    assert data["tool"]["mypy"]["python_version"] == floor.group(1)
    for page in ("README.md", "docs/getting-started.md"):
        stated = re.findall(r"Python ≥ (\d+\.\d+)", (ROOT / page).read_text())
        assert stated and set(stated) == {floor.group(1)}, (page, stated)
