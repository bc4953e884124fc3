"""mypy finds no error in the typed plugin contract: fastsched/framework, fastsched/runtime and
fastsched/plugins (the plugins' tests included), and in the other packages listed in the ``files``
of [tool.mypy] in pyproject.toml (config, controller, extender, util, ...), as configured there
(the modules they import from other packages are read for their types, not reported on). A new
type error there fails here."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_plugin_contract_type_checks(tmp_path):
    if importlib.util.find_spec("mypy") is None:  # in the [test] extra; absent only in a bare install
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    if os.environ.get("FASTSCHED_EXPECT_INSTALLED") == "1":  # .ci/run's second run, from a copy of tests/
        pytest.skip("a static check of the checkout's sources (fastsched/, not installed anywhere): the run "
                    "against the checkout does it; the run against the installed wheel has no sources to check")
    # a fresh cache: the check reads this tree, not what an earlier run of another checkout cached
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().splitlines()[-1].startswith("Success: no issues found"), done.stdout[-2000:]
