"""What pytest-benchmark's JSON records about the run besides the timings: the CPU model (from
/proc/cpuinfo), Python and NumPy versions, the commit, and the machine's load average when the
run started and when it ended (other processes share this machine). ``benchmarks/report.py``
prints them above the tables."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

_LOAD: dict[str, list[float]] = {}


def _loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:  # not Linux
        return list(os.getloadavg()) if hasattr(os, "getloadavg") else []


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def pytest_sessionstart(session):
    _LOAD["start"] = _loadavg()


def pytest_benchmark_update_machine_info(config, machine_info):
    import numpy

    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # an exported tree (git archive): say which
        commit = os.environ.get("FASTSCHED_BENCH_COMMIT", "")
    machine_info["fastsched"] = {
        "cpu_model": _cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
        "numpy": numpy.__version__, "commit": commit,
        "loadavg_start": _LOAD.get("start", []), "loadavg_end": _loadavg(),
    }
