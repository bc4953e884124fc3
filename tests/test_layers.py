"""pyproject.toml's import-linter contracts are kept: the package's layers (a module imports only
from its own layer and the layers below, the plugins' own tests aside) and no import cycles
between sibling packages or modules (but the four listed inside fastsched.api); a new upward import
or cycle fails here."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:  # import-linter is in the [test] extra: missing means a broken install
        pytest.fail("lint-imports not found: install the test extra (pip install -e '.[test]')")
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and done.stdout.count(" KEPT") == 2  # layers, no import cycles
