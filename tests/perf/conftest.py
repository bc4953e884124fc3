"""Helpers for the perf tests: write a config in upstream's format, with templates, to a folder."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

UPSTREAM = Path(__file__).parent / "data" / "upstream"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests: {cpu: 100m, memory: 500Mi}
"""


@pytest.fixture
def perf_dir(tmp_path):
    """``write(config_text, **templates)`` -> the config's path; templates go under templates/."""
    def write(config: str, **templates: str) -> Path:
        (tmp_path / "templates").mkdir(exist_ok=True)
        for name, text in templates.items():
            (tmp_path / "templates" / name.replace("__", ".").replace("_", "-")).write_text(textwrap.dedent(text))
        path = tmp_path / "topic" / "performance-config.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(config))
        return path

    return write
