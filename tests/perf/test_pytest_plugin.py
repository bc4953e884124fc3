"""The pytest plugin, used as a user would: a temporary project whose tests use the fixtures, run by
pytest in a subprocess, the plugin found through fastsched's ``pytest11`` entry point."""
import re
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

#: the guide page whose test file a user copies (it was the README's until the documentation site)
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "pytest-plugin.md"

MORE = '''
def test_cluster_and_framework(fastsched_cluster, fastsched_framework):
    nodes, pods = fastsched_cluster(nodes=40, pods=60, zones=2, seed=3)
    assert len(nodes) == 40 and len(pods) == 60
    assert nodes == fastsched_cluster(nodes=40, pods=60, zones=2, seed=3)[0]   # seeded
    fw = fastsched_framework(nodes=nodes, pods=pods)
    assert "NodeResourcesFit" in fw.plugins_map


def test_workload_sizes(fastsched_workload):
    wl = fastsched_workload("SchedulingPodAffinity", nodes=100)
    assert len(wl.nodes) == 100 and len(wl.init_pods) == 100 and wl.prebound
'''


def test_entry_point_is_registered():
    # the installed distribution's metadata (pyproject.toml's [project.entry-points.pytest11])
    names = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert names.get("fastsched") == "fastsched.pytest_plugin"


def test_guide_example_runs_in_a_user_project(tmp_path):
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
                if "fastsched_benchmark(" in b]
    (tmp_path / "test_user.py").write_text(block + textwrap.dedent(MORE))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           "--benchmark-disable-gc", "test_user.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout
    assert re.search(r"pods/s: \d", proc.stdout), proc.stdout


def test_only_run_is_timed(monkeypatch):
    """The measured pods are added in the set-up: a slow add_pods does not count, a slow run does.
    The plugin's clocks are replaced by one that only the slow calls advance (by an hour), so the
    check does not depend on how fast the machine is."""
    import types

    from fastsched import Scheduler, pytest_plugin
    from fastsched.pytest_plugin import schedule_workload
    from fastsched.sim.workloads import WORKLOADS

    now = [0.0]
    monkeypatch.setattr(pytest_plugin, "time", types.SimpleNamespace(perf_counter=lambda: now[0],
                                                                     process_time=lambda: now[0]))
    wl = WORKLOADS["SchedulingBasic"].build(nodes=20, init_pods=10, measured_pods=10, prebind=True)
    add_pods, run = Scheduler.add_pods, Scheduler.run

    def slow_add_pods(self, pods):
        now[0] += 3600.0
        return add_pods(self, pods)

    monkeypatch.setattr(Scheduler, "add_pods", slow_add_pods)
    result = schedule_workload(wl)
    assert result.scheduled == 10 and result.seconds == 0 and result.cpu_seconds == 0, result

    def slow_run(self, *args, **kwargs):
        now[0] += 3600.0
        return run(self, *args, **kwargs)

    monkeypatch.setattr(Scheduler, "run", slow_run)
    result = schedule_workload(wl)
    assert result.seconds == 3600.0 and result.cpu_seconds == 3600.0, result
