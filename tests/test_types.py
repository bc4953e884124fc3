"""mypy finds no error in the typed plugin contract: fastsched/framework, fastsched/runtime and
fastsched/plugins (the plugins' tests included), as configured under [tool.mypy] in pyproject.toml
(the modules they import from other packages are read for their types, not reported on). A new
type error there fails here."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_plugin_contract_type_checks(tmp_path):
    if importlib.util.find_spec("mypy") is None:  # in the [test] extra; absent only in a bare install
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    # a fresh cache: the check reads this tree, not what an earlier run of another checkout cached
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().splitlines()[-1].startswith("Success: no issues found"), done.stdout[-2000:]
