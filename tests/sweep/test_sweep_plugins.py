"""Sweeps with out-of-tree plugins: the numba example plugin and a small Python plugin, listed under
the sweep's ``plugins`` (or given to ``sweep(plugins=..., registry=...)``), on the process pool and
on a Dask LocalCluster; each run's placements equal a direct simulation with the same registry."""
from __future__ import annotations

import csv
import json
import os
import pathlib
import sys
import textwrap

import pytest

from fastsched import sweep
from fastsched.cli import main
from fastsched import check_config
from fastsched.runtime import Registry
from fastsched.sim.scenario import Scenario
from fastsched.sim.simulation import simulate
from fastsched.sim.sweep import FAILED, OK, SweepError, load_sweep

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "numba_gpu_fragmentation"
sys.path.insert(0, str(EXAMPLE))
import gpu_fragmentation as fgd  # noqa: E402  (the module name the sweep's workers give the file, too)

#: four GPU nodes and four cpu-only ones; cpu-only pods arrive first and stay, GPU pods later: spread
#: by LeastAllocated, the cpu pods eat the cpu that the GPU nodes' GPUs need; GpuFragmentation keeps
#: (more of) that cpu free, so more GPU pods fit
SCENARIO = """\
name: gpus
seed: 1
until: 200
cluster:
  nodes: 8
  shapes: [{cpu: 32, memory: 128Gi, nvidia.com/gpu: 8, weight: 1}, {cpu: 32, memory: 128Gi, weight: 1}]
arrivals:
  - name: cpu
    rate: 2
    count: 24
    template: {spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "8", memory: 4Gi}}}]}}
    duration: {distribution: constant, value: 1000}
  - name: gpu
    start: 30
    rate: 1
    count: 16
    template:
      spec:
        containers:
          - {name: c, image: x, resources: {requests: {cpu: "8", memory: 4Gi, nvidia.com/gpu: "2"},
                                            limits: {nvidia.com/gpu: "2"}}}
    duration: {distribution: constant, value: 1000}
"""

#: a plain-Python Filter plugin, in a file beside the sweep file
CAP_PLUGIN = '''\
from fastsched.framework import Code, FilterPlugin, Status


class AtMostPerNode(FilterPlugin):
    """Rejects the nodes that already run ``max`` pods."""

    NAME = "AtMostPerNode"

    def __init__(self, args=None, handle=None):
        self.max = int((args or {}).get("max", 1))

    def name(self):
        return self.NAME

    def filter(self, state, pod, node_info):
        if len(node_info.pods) >= self.max:
            return Status(Code.UNSCHEDULABLE, f"node already runs {self.max} pods")
        return None


REGISTRY = {"AtMostPerNode": AtMostPerNode}
'''
CAP_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      filter: {enabled: [{name: %s}]}
    pluginConfig:
      - {name: %s, args: {max: 2}}
"""


@pytest.fixture(autouse=True)
def _forget_test_plugin_modules():
    """The plugin files these tests write are imported under their stems: forget them afterwards
    (a rerun writes them elsewhere, and another file of the same name is an error by design)."""
    path = list(sys.path)
    yield
    for name in [m for m in sys.modules if m.startswith(("sweep_cap_", "sweep_broken_"))]:
        del sys.modules[name]
    sys.path[:] = path


def wall_free(row: dict) -> dict:
    wall = ("pods_per_second", "scheduler_seconds", "setup_seconds", "wall_seconds", "seconds",
            "attempt_latency_seconds")
    return {k: v for k, v in row.items() if not k.startswith(wall) and k not in ("traceback",)}


def placements(run_dir: pathlib.Path) -> dict[str, str]:
    with open(run_dir / "pods.csv", newline="", encoding="utf-8") as fh:
        return {r["name"]: r["node"] for r in csv.DictReader(fh)}


def direct(scenario_file: pathlib.Path, config: pathlib.Path | None, registry: Registry) -> dict[str, str]:
    """The placements of a simulation run here, with the same registry and config."""
    sc = Scenario.load(scenario_file)
    if config is not None:
        sc.config = check_config(str(config), registry=registry)
    result = simulate(sc, registry=registry)
    return {r.name: r.node or "" for r in result.records}


@pytest.fixture
def frag_dir(tmp_path):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "sweep.yaml").write_text(textwrap.dedent(f"""\
        name: frag
        scenario: scenario.yaml
        plugins:
          - {EXAMPLE / "gpu_fragmentation.py"}:GpuFragmentation
        runs:
          - {{name: default, seed: 1}}
          - {{name: frag, seed: 1, config: {EXAMPLE / "config.yaml"}}}
          - {{name: frag-s2, seed: 2, config: {EXAMPLE / "config.yaml"}}}
        """))
    return tmp_path


def test_numba_plugin_in_a_sweep_on_processes_and_dask(frag_dir):
    by_pool = sweep(frag_dir / "sweep.yaml", out=frag_dir / "pool", workers=2, report="data")
    rows = {r["run"]: r for r in by_pool.rows}
    assert all(r["status"] == OK for r in by_pool.rows), [r["error"] for r in by_pool.rows]
    assert [p.where for p in load_sweep(frag_dir / "sweep.yaml").plugins] == ["plugins[0]"]
    # the plugin changed the outcome: more GPU pods fit when the cpu pods avoid the GPU nodes
    assert rows["frag"]["pods_scheduled"] > rows["default"]["pods_scheduled"]
    assert rows["frag"]["pods_total"] == rows["default"]["pods_total"] == 40
    frag = placements(frag_dir / "pool" / "runs" / "frag")
    assert frag != placements(frag_dir / "pool" / "runs" / "default")
    # ... and each run is exactly the simulation of its scenario with the plugin registered
    reg = Registry({"GpuFragmentation": fgd.GpuFragmentation})
    assert frag == direct(frag_dir / "scenario.yaml", EXAMPLE / "config.yaml", reg)
    assert placements(frag_dir / "pool" / "runs" / "default") == direct(frag_dir / "scenario.yaml", None, reg)

    pytest.importorskip("distributed")
    by_dask = sweep(frag_dir / "sweep.yaml", out=frag_dir / "dask", local_dask=2, report="data")
    assert [wall_free(r) for r in by_dask.rows] == [wall_free(r) for r in by_pool.rows]
    for name in rows:
        assert placements(frag_dir / "dask" / "runs" / name) == placements(frag_dir / "pool" / "runs" / name)


def test_without_the_plugins_entry_a_config_naming_the_plugin_fails_the_run(frag_dir):
    text = (frag_dir / "sweep.yaml").read_text()
    start, end = text.index("plugins:"), text.index("runs:")
    (frag_dir / "bare.yaml").write_text(text[:start] + text[end:])
    result = sweep(frag_dir / "bare.yaml", out=frag_dir / "out", executor=_inline(), report="data")
    rows = {r["run"]: r for r in result.rows}
    assert rows["default"]["status"] == OK
    assert rows["frag"]["status"] == FAILED
    assert 'ScorePlugin "GpuFragmentation" does not exist' in rows["frag"]["error"]
    assert rows["frag"]["error"].startswith("SpecError: config: ")


def _inline():
    import concurrent.futures as cf

    return cf.ThreadPoolExecutor(max_workers=1)


def test_plugin_file_relative_to_the_sweep_file_its_registry_module_form_and_a_name(tmp_path, monkeypatch):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "sweep_cap_plugin_a.py").write_text(CAP_PLUGIN)
    (tmp_path / "cap.yaml").write_text(CAP_CONFIG % ("AtMostPerNode", "AtMostPerNode"))
    (tmp_path / "cap2.yaml").write_text(CAP_CONFIG % ("Cap2", "Cap2"))
    # an importable module (on sys.path, which the pool's forked workers inherit)
    pkg = tmp_path / "pkgroot"
    pkg.mkdir()
    (pkg / "sweep_cap_module_b.py").write_text(CAP_PLUGIN.replace('NAME = "AtMostPerNode"', 'NAME = "CapB"'))
    monkeypatch.syspath_prepend(str(pkg))
    (tmp_path / "sweep.yaml").write_text(textwrap.dedent("""\
        name: cap
        scenario: scenario.yaml
        plugins:
          - plugins/sweep_cap_plugin_a.py            # its REGISTRY
          - {name: Cap2, plugin: "plugins/sweep_cap_plugin_a.py:AtMostPerNode"}
          - sweep_cap_module_b:AtMostPerNode         # a class of an importable module, under its NAME
        runs:
          - {name: plain, seed: 1}
          - {name: cap, seed: 1, config: cap.yaml}
          - {name: cap2, seed: 1, config: cap2.yaml}
        """))
    plan = load_sweep(tmp_path / "sweep.yaml")
    assert [(p.where, p.is_file, p.attr, p.name) for p in plan.plugins] == [
        ("plugins[0]", True, None, None), ("plugins[1].plugin", True, "AtMostPerNode", "Cap2"),
        ("plugins[2]", False, "AtMostPerNode", None)]
    assert plan.plugins[0].module == str(tmp_path / "plugins" / "sweep_cap_plugin_a.py")
    result = sweep(plan, out=tmp_path / "out", workers=2, report="data")
    rows = {r["run"]: r for r in result.rows}
    assert all(r["status"] == OK for r in result.rows), [r["error"] for r in result.rows]
    # at most 2 pods on each of the 8 nodes
    assert rows["cap"]["pods_scheduled"] == rows["cap2"]["pods_scheduled"] == 16
    assert rows["plain"]["pods_scheduled"] > 16
    for name in ("cap", "cap2"):
        nodes = [n for n in placements(tmp_path / "out" / "runs" / name).values() if n]
        assert max(nodes.count(n) for n in set(nodes)) == 2
    assert placements(tmp_path / "out" / "runs" / "cap") == placements(tmp_path / "out" / "runs" / "cap2")


def test_python_api_plugins_and_registry_and_resume(tmp_path):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    plugin = tmp_path / "sweep_cap_plugin_c.py"
    plugin.write_text(CAP_PLUGIN)
    (tmp_path / "cap.yaml").write_text(CAP_CONFIG % ("AtMostPerNode", "AtMostPerNode"))
    spec = {"name": "api", "scenario": "scenario.yaml",
            "runs": [{"name": "cap", "seed": 1, "config": "cap.yaml"},
                     {"name": "frag", "seed": 1, "config": str(EXAMPLE / "config.yaml")}]}
    plan = load_sweep(spec, base_dir=tmp_path)
    reg = Registry({"GpuFragmentation": fgd.GpuFragmentation})  # pickled to the workers
    out = tmp_path / "out"
    first = sweep(plan, out=out, workers=2, report="data", plugins=[f"{plugin}:AtMostPerNode"], registry=reg)
    assert first.ran == 2 and all(r["status"] == OK for r in first.rows), [r["error"] for r in first.rows]
    rows = {r["run"]: r for r in first.rows}
    assert rows["cap"]["pods_scheduled"] == 16
    assert placements(out / "runs" / "frag") == direct(tmp_path / "scenario.yaml", EXAMPLE / "config.yaml", reg)
    # the same plugins: nothing to run again
    again = sweep(plan, out=out, workers=2, report="data", plugins=[f"{plugin}:AtMostPerNode"], registry=reg)
    assert (again.ran, again.skipped) == (0, 2)
    assert [wall_free(r) for r in again.rows] == [wall_free(r) for r in first.rows]
    # an edited plugin file: every run again, with the new code (max 1 pod per node by default now)
    plugin.write_text(CAP_PLUGIN.replace('get("max", 1)', 'get("max", 1) - 1 or 1'))
    os.utime(plugin, ns=(plugin.stat().st_atime_ns, plugin.stat().st_mtime_ns + 10**9))
    edited = sweep(plan, out=out, workers=2, report="data", plugins=[f"{plugin}:AtMostPerNode"], registry=reg)
    assert edited.ran == 2
    assert {r["run"]: r["pods_scheduled"] for r in edited.rows}["cap"] == 8
    # without the registry, the frag run's key differs too (and it fails: the plugin is unknown)
    bare = sweep(plan, out=out, workers=2, report="data", plugins=[f"{plugin}:AtMostPerNode"])
    assert bare.ran == 2 and {r["run"]: r["status"] for r in bare.rows} == {"cap": OK, "frag": FAILED}


def test_the_cli_runs_a_sweep_with_plugins(frag_dir, capsys):
    assert main(["sweep", str(frag_dir / "sweep.yaml"), "--out", str(frag_dir / "cli"), "--workers", "2",
                 "--report", "data", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 3 and out["failed"] == []
    assert placements(frag_dir / "cli" / "runs" / "frag") == direct(
        frag_dir / "scenario.yaml", EXAMPLE / "config.yaml", Registry({"GpuFragmentation": fgd.GpuFragmentation}))


@pytest.mark.parametrize("plugins, message", [
    ("gpu_fragmentation.py", "plugins: must be a list of plugin entries"),
    (["nope_no_such_module_xyz:Foo"],
     "plugins[0]: cannot import 'nope_no_such_module_xyz:Foo': ModuleNotFoundError: No module named "
     "'nope_no_such_module_xyz'"),
    (["json:dumps", "missing/plugin.py:Foo"], "plugins[1]: no such Python file "),
    (["json:no_such_attr"], "plugins[0]: json has no attribute 'no_such_attr'"),
    (["json"], "plugins[0]: json has no REGISTRY (a mapping of plugin name -> factory): name the plugin class"),
    (["json:decoder.JSONDecodeError.__doc__"], "plugins[0]: json:decoder.JSONDecodeError.__doc__ is neither a "
                                                "plugin factory"),
    (["not a module!"], "plugins[0]: 'not a module!' is neither a module name (a.b.c) nor a .py file"),
    ([{"plugin": "json:dumps"}], "plugins[0].name: required"),
    ([{"name": "X", "plugin": "json:dumps", "weight": 2}], "plugins[0].weight: unknown field"),
    ([{"name": "X", "plugin": "json"}], "plugins[0].plugin: 'json': name the factory"),
    ([{"name": "NodeResourcesFit", "plugin": "json:dumps"}],
     "plugins[0].name: a plugin named 'NodeResourcesFit' is in-tree"),
    (["json:dumps", {"name": "dumps", "plugin": "json:loads"}],
     "plugins[1].name: a plugin named 'dumps' is already registered (by plugins[0])"),
    ([3], "plugins[0]: must be \"module:Class\""),
])
def test_plugin_entries_errors_name_the_entry(tmp_path, plugins, message):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    spec = {"scenario": "scenario.yaml", "plugins": plugins, "runs": [{"name": "a"}]}
    with pytest.raises(SweepError) as err:
        load_sweep(spec, base_dir=tmp_path)
    assert str(err.value).startswith(message), str(err.value)


def test_a_plugin_file_that_fails_to_import_names_the_entry(tmp_path, capsys):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "sweep_broken_plugin_d.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "sweep.yaml").write_text("scenario: scenario.yaml\nplugins: [sweep_broken_plugin_d.py:X]\n"
                                         "runs: [{name: a}]\n")
    with pytest.raises(SweepError, match=r"^plugins\[0\]: cannot import 'sweep_broken_plugin_d.py:X': "
                                         r"RuntimeError: boom at import$"):
        load_sweep(tmp_path / "sweep.yaml")
    assert "sweep_broken_plugin_d" not in sys.modules
    # the CLI says which entry
    assert main(["sweep", str(tmp_path / "sweep.yaml"), "--out", str(tmp_path / "out")]) != 0
    assert ("sweep.yaml: plugins[0]: cannot import 'sweep_broken_plugin_d.py:X': RuntimeError: boom at import"
            in capsys.readouterr().err)


def test_sweep_api_errors(tmp_path):
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    spec = {"scenario": "scenario.yaml", "plugins": ["json:dumps"], "runs": [{"name": "a"}]}
    plan = load_sweep(spec, base_dir=tmp_path)
    with pytest.raises(SweepError, match=r"^plugins\[1\]: cannot import 'nope_xyz_mod:A': ModuleNotFoundError"):
        sweep(plan, out=tmp_path / "o", plugins=["nope_xyz_mod:A"])
    with pytest.raises(SweepError, match=r"^registry: a plugin named 'dumps' is already registered \(by plugins\[0\]\)"):
        sweep(plan, out=tmp_path / "o", registry={"dumps": fgd.GpuFragmentation})
    with pytest.raises(SweepError, match=r"^registry: must be a Registry or a mapping"):
        sweep(plan, out=tmp_path / "o", registry=[fgd.GpuFragmentation])
