"""Sweeps: many independent simulations (configs, weights, cluster sizes, workloads, seeds), one table.

A sweep file (YAML; paths in it resolve against its folder)::

    name: weights
    scenario: scenario.yaml          # a scenario file, or a scenario mapping inline
    seed: 0                          # optional: derives the seed of runs that give none
    runs:                            # a list of runs ...
      - {name: least-s1, seed: 1, config: least.yaml}
      - {name: most-s1, seed: 1, config: most.yaml}
    grid:                            # ... and/or a grid: one run per combination
      config: [least.yaml, most.yaml]
      seed: [1, 2, 3]
      cluster.nodes: [500, 1000]     # a dotted key overrides a field inside the scenario

In a run (or a grid axis) ``config`` is a KubeSchedulerConfiguration path or mapping that replaces
the scenario's; ``name`` names the run (grid runs are named after their values, e.g.
``config=least,seed=1``); every other key overrides the scenario field of that name (``seed``,
``until``, ``cluster``, ``arrivals``, ...), a dotted key a field inside one (``cluster.nodes``,
``arrivals.0.rate``). A run without a ``seed`` gets one derived from the sweep's seed and its name
(the same on every machine and every rerun).

:func:`sweep` runs each run as a task on a :class:`concurrent.futures.Executor` (processes by
default; ``dask=ADDRESS`` for a Dask cluster, ``local_dask=N`` for a local one of N workers;
Dask is the optional extra ``fastsched[dask]``) and writes into ``out``:

* ``runs/<run>/``: the run's simulation report (``summary.json``, ``pods.csv``, ...) and
  ``run.json`` (its row of the table); a failed run has ``run.json`` with its error;
* ``results.csv`` (and ``results.parquet`` when pyarrow is installed): one row per run, in the
  sweep's order: ``run``, ``status`` (``ok`` / ``failed``), ``error``, ``seconds``, ``seed``, the
  run's parameters (``param.<key>``) and its summary metrics (nested ones flattened with dots:
  ``placement_latency_seconds.p99``).

Out-of-tree plugins (a user's own plugins, numba ones included) are listed under ``plugins``; every
run's Scheduler is built with them merged into the in-tree registry, and the runs' configs (the
scenario's, or a run's ``config``) may enable and configure them like in-tree ones::

    plugins:
      - gpu_fragmentation.py:GpuFragmentation   # a class in a Python file (relative to the sweep file)
      - mypackage.plugins:PreferFast            # a class (or factory) in an importable module
      - mypackage.more_plugins                  # a module: its REGISTRY (plugin name -> factory)
      - {name: Frag2, plugin: gpu_fragmentation.py:GpuFragmentation}   # under another name

A class is registered under its ``NAME`` attribute when it has one (numba plugins do), else under
its class name; ``attr`` may also name a :class:`~fastsched.runtime.Registry` or a mapping of
plugin name -> factory. The sweep imports every entry when it is loaded (an entry that cannot be
imported is an error naming it: ``plugins[1]: cannot import ...``), and each worker process (a
process of the pool, or a Dask worker) imports them again, once per process: a Python file is loaded
as the module named after it (``gpu_fragmentation.py``: ``gpu_fragmentation``, its folder appended to
``sys.path``), a module by name (it must be importable in the workers: on a Dask cluster, installed
on every worker). numba kernels with ``cache=True`` are compiled once and loaded from
numba's cache by the other workers. ``sweep(..., plugins=[...])`` adds entries (relative to the
working directory) and ``sweep(..., registry=...)`` a Registry (its factories must pickle: classes
defined at the top level of an importable module). A rerun skips a finished run only if the plugins
are the same (and their files unchanged).

A failing run is recorded with its error and never stops the sweep. Rerunning a sweep into the same
``out`` skips the runs already finished with the same scenario, parameters and named files (their
content: an edited config runs again); ``resume=False`` runs all.
"""
from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import importlib
import importlib.util
import itertools
import json
import math
import os
import re
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import sys

import yaml

from ..errors import FastschedError
from ..util.yamlsafe import checked

__all__ = ["SweepError", "Sweep", "SweepRun", "SweepResult", "PluginSpec", "load_sweep", "sweep", "run_task",
           "parse_plugin_specs", "plugin_registry"]

#: keys of a sweep file
_TOP_LEVEL = ("name", "description", "scenario", "seed", "plugins", "runs", "grid")
#: statuses of a row
OK = "ok"
FAILED = "failed"
#: the leading columns of results.csv
BASE_COLUMNS = ("run", "status", "error", "seconds", "seed")
RUN_FILE = "run.json"
#: per-run reports: ``full`` (fastsched simulate's report: plots, report.html, ...) or ``data``
#: (summary.json, pods.csv, timeseries.csv: the plots take most of a small run's time)
FULL_REPORT = "full"
DATA_REPORT = "data"
REPORT_KINDS = (FULL_REPORT, DATA_REPORT)
RESULTS_CSV = "results.csv"
RESULTS_PARQUET = "results.parquet"


class SweepError(FastschedError, ValueError):
    """A sweep file that cannot be read, naming the field."""


@dataclass
class SweepRun:
    """One run: its name, its parameters as given, and the scenario mapping they produce."""

    name: str
    params: dict
    seed: int
    scenario: dict
    base_dir: str

    @property
    def key(self) -> str:
        """A digest of what the run computes (its scenario, and the content of the files it names:
        configs, manifests, traces): a rerun with the same key may be skipped."""
        digest = hashlib.sha256(json.dumps({"scenario": self.scenario, "base_dir": self.base_dir},
                                           sort_keys=True, default=str).encode())
        for path in sorted(_named_files(self.scenario)):
            digest.update(path.encode())
            try:
                digest.update(Path(path).read_bytes())
            except OSError:
                pass
        return digest.hexdigest()[:20]


@dataclass
class Sweep:
    """A loaded sweep (see the module docstring)."""

    name: str
    runs: list[SweepRun]
    description: str = ""
    #: the out-of-tree plugins every run's Scheduler gets (checked: they import)
    plugins: list["PluginSpec"] = field(default_factory=list)


@dataclass
class SweepResult:
    """What :func:`sweep` did: the table's rows (one per run, in order) and where it wrote them."""

    rows: list[dict]
    out: Path
    ran: int = 0
    skipped: int = 0
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.rows if r["status"] != OK]


# ------------------------------------------------------------------------------------------------
# loading
# ------------------------------------------------------------------------------------------------
def load_sweep(source: Any, *, base_dir: str | os.PathLike | None = None) -> Sweep:
    """A Sweep from a file path, YAML text or a mapping (relative paths resolve against the
    file's folder, else ``base_dir`` or the working directory)."""
    if isinstance(source, Sweep):
        return source
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and "\n" in source):
        file = Path(source)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise SweepError(f"cannot read sweep {str(file)!r}: {exc.strerror or exc}") from None
        data = _yaml(text, str(file))
        base = Path(base_dir) if base_dir is not None else file.resolve().parent
    elif isinstance(source, str):
        data = _yaml(source, "sweep")
        base = Path(base_dir) if base_dir is not None else Path.cwd()
    elif isinstance(source, Mapping):
        data = source
        base = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        raise SweepError(f"cannot load a sweep from {type(source).__name__}")
    return _parse(data, base.resolve())


def _yaml(text: str, where: str) -> Any:
    try:
        return checked(lambda: yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise SweepError(f"{where}: invalid YAML: {' '.join(str(exc).split())}") from None


def _parse(data: Any, base: Path) -> Sweep:
    if not isinstance(data, Mapping):
        raise SweepError(f"a sweep must be a mapping, got {type(data).__name__}")
    # (sorted as text: YAML keys may be numbers, null or booleans too, which do not sort with strings)
    unknown = sorted(set(data) - set(_TOP_LEVEL), key=str)
    if unknown:
        raise SweepError(f"{_key_text(unknown[0])}: unknown field (known: {', '.join(_TOP_LEVEL)})")
    name = str(data.get("name") or "sweep")
    sweep_seed = data.get("seed", 0)
    if not isinstance(sweep_seed, int) or isinstance(sweep_seed, bool) or sweep_seed < 0:
        raise SweepError(f"seed: must be a non-negative integer, got {sweep_seed!r}")
    scenario = _scenario_mapping(data.get("scenario"), base)
    entries: list[tuple[str | None, dict, str]] = []
    runs = data.get("runs") or []
    if not isinstance(runs, list):
        raise SweepError(f"runs: must be a list of mappings, got {type(runs).__name__}")
    for i, raw in enumerate(runs):
        if not isinstance(raw, Mapping):
            raise SweepError(f"runs[{i}]: must be a mapping, got {type(raw).__name__}")
        params = dict(raw)
        _field_names(params, f"runs[{i}]")
        run_name = params.pop("name", None)
        entries.append((None if run_name is None else str(run_name), params, f"runs[{i}]"))
    grid = data.get("grid") or {}
    if not isinstance(grid, Mapping):
        raise SweepError(f"grid: must be a mapping of key -> list of values, got {type(grid).__name__}")
    axes = []
    _field_names(grid, "grid")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f"grid.{key}: must be a non-empty list of values")
        axes.append((str(key), values))
    for combo in itertools.product(*[values for _, values in axes]) if axes else ():
        params = {key: value for (key, _), value in zip(axes, combo)}
        entries.append((None, params, "grid"))
    if not entries:
        raise SweepError("no runs: give runs, a grid, or both")
    plugins = parse_plugin_specs(data.get("plugins"), base, "plugins")
    plugin_registry(plugins)  # they import, and their names are free (else an error naming the entry)
    out: list[SweepRun] = []
    seen: set[str] = set()
    for run_name, params, where in entries:
        run_name = run_name or _auto_name(params)
        if not _SAFE_NAME.fullmatch(run_name):
            raise SweepError(f"{where}: run name {run_name!r}: use letters, digits and . _ - = , + only")
        if run_name in seen:
            raise SweepError(f"{where}: duplicate run name {run_name!r}")
        seen.add(run_name)
        out.append(_make_run(run_name, params, scenario, base, sweep_seed, where))
    return Sweep(name=name, runs=out, description=str(data.get("description") or ""), plugins=plugins)


def _field_names(params: Mapping[Any, Any], where: str) -> None:
    """A run's (a grid's) keys name scenario fields (dotted for a field inside one): strings. A
    YAML key that is a number, null or a boolean (``1: x``) is refused here, naming it."""
    for key in params:
        if not isinstance(key, str):
            raise SweepError(f"{where}: {_key_text(key)}: a field name must be a string, got {_yaml_type(key)}")


def _key_text(key: Any) -> str:
    """A mapping key as the YAML file spells it (``null``, ``true``, ``1``), not as Python prints it
    (``None``, ``True``): a sweep's author wrote YAML."""
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return str(key)


def _yaml_type(value: Any) -> str:
    """The YAML name of a value's type (``null``, ``bool``, ``int``, ``float``, ``str``)."""
    return "null" if value is None else type(value).__name__


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._=,+-]*")


def _auto_name(params: Mapping[str, Any]) -> str:
    """``key=value,...`` with file values by their stem (``least.yaml`` -> ``least``)."""
    parts = []
    for key, value in params.items():
        if isinstance(value, str) and value.endswith((".yaml", ".yml", ".json")):
            value = Path(value).stem
        elif isinstance(value, (Mapping, list)):
            value = hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]
        text = re.sub(r"[^A-Za-z0-9._+-]+", "-", f"{value}").strip("-") or "x"
        parts.append(f"{key}={text}")
    return ",".join(parts) or "run"


def _scenario_mapping(raw: Any, base: Path) -> dict:
    if raw is None:
        raise SweepError("scenario: required (a scenario file or mapping)")
    if isinstance(raw, str):
        file = (base / raw).resolve()
        try:
            data = checked(lambda: yaml.safe_load(file.read_text(encoding="utf-8")))
        except OSError as exc:
            raise SweepError(f"scenario: cannot read {str(file)!r}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise SweepError(f"scenario: {file}: invalid YAML: {' '.join(str(exc).split())}") from None
        if not isinstance(data, Mapping):
            raise SweepError(f"scenario: {file} must hold a mapping")
        return _absolute_paths(dict(data), file.parent)
    if isinstance(raw, Mapping):
        return _absolute_paths(dict(raw), base)
    raise SweepError(f"scenario: must be a path or a mapping, got {type(raw).__name__}")


#: scenario fields holding a path (relative to the file that names them)
_PATH_FIELDS = {("config",), ("cluster", "nodes"), ("cluster", "pods")}


def _absolute_paths(scenario: dict, base: Path) -> dict:
    """The scenario with the paths it names made absolute (so that it can move to a worker), the
    arrival templates and traces included."""
    out = json.loads(json.dumps(scenario, default=str))
    for path in _PATH_FIELDS:
        _absolutize(out, path, base)
    # (a field of another type is left as it is, for the scenario's loader to refuse, naming it)
    arrivals = out.get("arrivals")
    for stream in arrivals if isinstance(arrivals, list) else ():
        if isinstance(stream, dict):
            for key in ("template", "trace"):
                _absolutize(stream, (key,), base)
            mixes = stream.get("mix")
            for mix in mixes if isinstance(mixes, list) else ():
                if isinstance(mix, dict):
                    _absolutize(mix, ("template",), base)
    return out


def _absolutize(data: Any, path: tuple, base: Path) -> None:
    for key in path[:-1]:
        if not isinstance(data, dict):
            return
        data = data.get(key)
    if isinstance(data, dict):
        value = data.get(path[-1])
        if isinstance(value, str) and "\n" not in value and _is_file(base / value):
            data[path[-1]] = str((base / value).resolve())


def _named_files(data: Any) -> set[str]:
    """The absolute paths of existing files among the strings of a scenario mapping."""
    if isinstance(data, Mapping):
        return set().union(*(_named_files(v) for v in data.values())) if data else set()
    if isinstance(data, list):
        return set().union(*(_named_files(v) for v in data)) if data else set()
    if isinstance(data, str) and "\n" not in data and os.path.isabs(data) and _is_file(Path(data)):
        return {data}
    return set()


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except OSError:
        return False


def _derived_seed(sweep_seed: int, run_name: str) -> int:
    digest = hashlib.sha256(f"{sweep_seed}:{run_name}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _make_run(name: str, params: dict, scenario: dict, base: Path, sweep_seed: int, where: str) -> SweepRun:
    data = json.loads(json.dumps(scenario))
    for key, value in params.items():
        if key == "config":
            if isinstance(value, str) and "\n" not in value:
                file = (base / value).resolve()
                if not file.is_file():
                    raise SweepError(f"{where}: config: no such file {str(file)!r}")
                value = str(file)
            elif not isinstance(value, (Mapping, str)):
                raise SweepError(f"{where}: config: must be a path or a mapping, got {type(value).__name__}")
            data["config"] = value
            continue
        value = _absolute_value(key, value, base)
        _set_dotted(data, key, json.loads(json.dumps(value, default=str)), f"{where}: {key}")
    seed = params.get("seed")
    if seed is None:
        seed = _derived_seed(sweep_seed, name)
        data["seed"] = seed
    elif not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"{where}: seed: must be a non-negative integer, got {seed!r}")
    return SweepRun(name=name, params=dict(params), seed=int(seed), scenario=data, base_dir=str(base))


def _absolute_value(key: str, value: Any, base: Path) -> Any:
    """A whole ``cluster`` or ``arrivals`` given in the sweep: its paths against the sweep file."""
    if key in ("cluster", "arrivals"):
        return _absolute_paths({key: value}, base)[key]
    if key in ("cluster.nodes", "cluster.pods") and isinstance(value, str) and _is_file(base / value):
        return str((base / value).resolve())
    return value


def _set_dotted(data: dict, key: str, value: Any, where: str) -> None:
    parts = key.split(".")
    target: Any = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(target, list):
            if not part.isdigit() or int(part) >= len(target):
                raise SweepError(f"{where}: no item {part} in the scenario's list")
            target = target[int(part)]
        elif isinstance(target, dict):
            if target.get(part) is None:
                target[part] = {}  # (a field the scenario leaves out: the override adds it)
            elif not isinstance(target[part], (dict, list)):
                # (replacing the scalar by a mapping of the one key would hand the run a field of
                # another type, refused only once the run loads its scenario)
                inner = ".".join(parts[:i + 1])
                raise SweepError(f"{where}: {inner} is {_yaml_type(target[part])} {target[part]!r} in the scenario: "
                                 f"no field inside it to override (override {inner} itself)")
            target = target[part]
        else:
            raise SweepError(f"{where}: the scenario has no field to override here")
    last = parts[-1]
    if isinstance(target, list):
        if not last.isdigit() or int(last) >= len(target):
            raise SweepError(f"{where}: no item {last} in the scenario's list")
        target[int(last)] = value
    elif isinstance(target, dict):
        target[last] = value
    else:  # (a list item that is not a mapping: "arrivals.0.rate" where arrivals[0] is null)
        raise SweepError(f"{where}: the scenario has no field to override here")


# ------------------------------------------------------------------------------------------------
# out-of-tree plugins
# ------------------------------------------------------------------------------------------------
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
#: the attribute a module (or file) named without ``:attr`` contributes
REGISTRY_ATTR = "REGISTRY"


@dataclass(frozen=True)
class PluginSpec:
    """One entry of a sweep's ``plugins``: where the factory (or registry) is, resolved."""

    where: str          # the entry's field path, for errors: "plugins[1]"
    text: str           # the entry as written (for messages)
    module: str         # a module name, or the absolute path of a Python file
    is_file: bool
    attr: str | None    # a dotted attribute of the module, or None for its REGISTRY
    name: str | None = None  # the plugin name given by the entry ({name: ..., plugin: ...})

    def as_task(self) -> dict:
        return {"where": self.where, "text": self.text, "module": self.module, "is_file": self.is_file,
                "attr": self.attr, "name": self.name}


def parse_plugin_specs(raw: Any, base: str | os.PathLike, where: str = "plugins", start: int = 0) -> list[PluginSpec]:
    """The entries of a ``plugins`` list (see the module docstring), files resolved against
    ``base``; raises :class:`SweepError` naming the entry (``plugins[1]: ...``, numbered from
    ``start``). Nothing is imported here (see :func:`plugin_registry`)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SweepError(f"{where}: must be a list of plugin entries (\"module:Class\", \"file.py:Class\", "
                         f"a module, or {{name, plugin}}), got {type(raw).__name__}")
    out = []
    for i, entry in enumerate(raw):
        at = f"{where}[{start + i}]"
        name = None
        if isinstance(entry, Mapping):
            unknown = sorted(set(entry) - {"name", "plugin"})
            if unknown:
                raise SweepError(f"{at}.{unknown[0]}: unknown field (known: name, plugin)")
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                raise SweepError(f"{at}.name: required: the plugin's name, got {name!r}")
            text = entry.get("plugin")
            if not isinstance(text, str) or not text.strip():
                raise SweepError(f"{at}.plugin: required: \"module:Class\" or \"file.py:Class\", got {text!r}")
            text_at = f"{at}.plugin"
        elif isinstance(entry, str) and entry.strip():
            text, text_at = entry, at
        else:
            raise SweepError(f"{at}: must be \"module:Class\", \"file.py:Class\", a module or a "
                             f"{{name, plugin}} mapping, got {entry!r}")
        text = text.strip()
        module, attr = text, None
        if ":" in text:
            left, right = text.rsplit(":", 1)
            if left and _DOTTED.fullmatch(right):
                module, attr = left, right
            elif left and not right.strip("\\/"):
                raise SweepError(f"{text_at}: {text!r}: nothing after ':' (give module:Class)")
        if name is not None and attr is None:
            raise SweepError(f"{text_at}: {text!r}: name the factory (module:Class) when the entry has a name")
        is_file = module.endswith(".py") or "/" in module or os.sep in module
        if is_file:
            path = Path(base) / module
            if not _is_file(path):
                raise SweepError(f"{text_at}: no such Python file {str(path.resolve())!r}")
            module = str(path.resolve())
        elif not _DOTTED.fullmatch(module):
            raise SweepError(f"{text_at}: {text!r} is neither a module name (a.b.c) nor a .py file")
        out.append(PluginSpec(where=text_at, text=text, module=module, is_file=is_file, attr=attr, name=name))
    return out


#: a module attribute: the (mtime, size) of the file when _file_module loaded it
_STAMP = "__fastsched_plugin_stamp__"


def _file_module(path: str) -> Any:
    """The module of a plugin file, imported once per process under its own name (the file's stem,
    as ``import stem`` with the file's folder on ``sys.path`` would: numba's cache, pickling and a
    plugin's imports of its sibling files then work as in the user's own scripts). A file changed
    since this function loaded it is loaded again (a long-lived process: a notebook, a Dask worker);
    another module already imported under that name is an error."""
    stem = Path(path).stem
    if not stem.isidentifier():
        raise ImportError(f"the file name {Path(path).name!r} is not a Python module name (letters, digits, _)")
    st = os.stat(path)
    stamp = (st.st_mtime_ns, st.st_size)
    existing = sys.modules.get(stem)
    if existing is not None:
        where = getattr(existing, "__file__", None)
        try:
            same = where is not None and os.path.samefile(where, path)
        except OSError:
            same = False
        if not same:
            raise ImportError(f"another module named {stem!r} is already imported (from {where or 'built-in'}): "
                              f"rename the plugin file")
        if getattr(existing, _STAMP, stamp) == stamp:
            return existing
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.append(folder)  # its sibling modules import (after everything installed)
    spec = importlib.util.spec_from_file_location(stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    setattr(module, _STAMP, stamp)
    previous = sys.modules.get(stem)
    sys.modules[stem] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if previous is not None:
            sys.modules[stem] = previous
        else:
            sys.modules.pop(stem, None)
        raise
    return module


def _factories(spec: PluginSpec) -> list[tuple[str, Any]]:
    """(plugin name, factory) pairs of one entry, imported; SweepError naming the entry otherwise."""
    try:
        module = _file_module(spec.module) if spec.is_file else importlib.import_module(spec.module)
    except Exception as exc:  # noqa: BLE001 - any error of the user's module is reported with the entry
        raise SweepError(f"{spec.where}: cannot import {spec.text!r}: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())}") from None
    what = spec.module if not spec.is_file else Path(spec.module).name
    if spec.attr is None:
        obj = getattr(module, REGISTRY_ATTR, None)
        if obj is None:
            raise SweepError(f"{spec.where}: {what} has no {REGISTRY_ATTR} (a mapping of plugin name -> factory): "
                             f"name the plugin class, e.g. '{spec.text}:MyPlugin'")
        attr = REGISTRY_ATTR
    else:
        obj, attr = module, spec.attr
        for part in spec.attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise SweepError(f"{spec.where}: {what} has no attribute {spec.attr!r}") from None
    if isinstance(obj, Mapping):
        if spec.name is not None:
            raise SweepError(f"{spec.where}: {what}:{attr} is a registry (a mapping); a name is for one factory")
        pairs = list(obj.items())
        for key, factory in pairs:
            if not isinstance(key, str) or not key:
                raise SweepError(f"{spec.where}: {what}:{attr}: plugin names must be non-empty strings, got {key!r}")
            if not callable(factory):
                raise SweepError(f"{spec.where}: {what}:{attr}[{key!r}] is not callable (a plugin factory: "
                                 f"a class or a function of (args, handle))")
        return pairs
    if not callable(obj):
        raise SweepError(f"{spec.where}: {what}:{attr} is neither a plugin factory (a class or a function of "
                         f"(args, handle)) nor a mapping of plugin name -> factory, got {type(obj).__name__}")
    name = spec.name
    if name is None:
        declared = getattr(obj, "NAME", None)
        name = declared if isinstance(declared, str) and declared else getattr(obj, "__name__", None)
    if not isinstance(name, str) or not name:
        raise SweepError(f"{spec.where}: {what}:{attr} has no name: give one ({{name: ..., plugin: {spec.text}}})")
    return [(name, obj)]


def plugin_registry(specs: Sequence[PluginSpec | Mapping[str, Any]], extra: Mapping[str, Any] | None = None) -> Any:
    """A :class:`~fastsched.runtime.Registry` of the entries' factories (imported here) and of
    ``extra`` (name -> factory), or None when there are none. A name that is in-tree or given
    twice is an error naming the entry."""
    from ..plugins import in_tree_registry
    from ..runtime import Registry

    if not specs and not extra:
        return None
    in_tree = set(in_tree_registry())
    reg = Registry()
    origin: dict[str, str] = {}
    entries: list[tuple[str, list[tuple[str, Any]]]] = []
    for spec in specs:
        if isinstance(spec, Mapping):
            spec = PluginSpec(**spec)
        named_at = spec.where[:-len(".plugin")] + ".name" if spec.name is not None else spec.where
        entries.append((named_at, _factories(spec)))
    if extra:
        entries.append(("registry", list(extra.items())))
    for where, pairs in entries:
        for name, factory in pairs:
            if not callable(factory):
                raise SweepError(f"{where}: the factory of plugin {name!r} is not callable")
            if name in in_tree:
                raise SweepError(f"{where}: a plugin named {name!r} is in-tree: an out-of-tree plugin needs a "
                                 f"name of its own")
            if name in origin:
                raise SweepError(f"{where}: a plugin named {name!r} is already registered (by {origin[name]})")
            origin[name] = where
            reg.register(name, factory)
    return reg


def _plugins_digest(specs: Sequence[PluginSpec], extra: Mapping[str, Any] | None) -> str:
    """What the plugins are, for the runs' keys: the entries, the content of the files (and of the
    modules' files) they name, and the extra registry's factories by qualified name ("" if none)."""
    if not specs and not extra:
        return ""
    digest = hashlib.sha256()
    for spec in specs:
        digest.update(json.dumps(spec.as_task(), sort_keys=True).encode())
        path = spec.module if spec.is_file else getattr(sys.modules.get(spec.module), "__file__", None)
        if path:
            try:
                digest.update(Path(path).read_bytes())
            except OSError:
                pass
    for name, factory in (extra or {}).items():
        digest.update(f"{name}={getattr(factory, '__module__', '')}.{getattr(factory, '__qualname__', repr(factory))}"
                      .encode())
    return digest.hexdigest()[:20]


# ------------------------------------------------------------------------------------------------
# one run (runs in a worker process)
# ------------------------------------------------------------------------------------------------
def run_task(task: Mapping[str, Any]) -> dict:
    """Simulate one run and write its report into ``task["dir"]``; return its row. Never raises:
    an error becomes a ``failed`` row (also written to the run's ``run.json``)."""
    from .report import write_report
    from .scenario import Scenario
    from .simulation import simulate

    started = time.perf_counter()
    out = Path(task["dir"])
    row: dict = {"run": task["name"], "status": OK, "error": "", "seconds": 0.0, "seed": task["seed"],
                 **{f"param.{k}": _cell(v) for k, v in task["params"].items()}}
    try:
        out.mkdir(parents=True, exist_ok=True)
        registry = plugin_registry(task.get("plugins") or (), task.get("registry"))
        scenario = _load_scenario(Scenario, task["scenario"], task["base_dir"], registry)
        result = simulate(scenario, record=task.get("record", "failures"), registry=registry)
        if task.get("report", FULL_REPORT) == FULL_REPORT:
            write_report(result, out)
        else:
            write_data_report(result, out)
        row.update(flatten(result.summary))
    except Exception as exc:  # noqa: BLE001 - one failing run never stops the sweep
        row["status"] = FAILED
        row["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        row["traceback"] = traceback.format_exc(limit=20)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["key"] = task["key"]
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / RUN_FILE).write_text(json.dumps(row, indent=1, default=str), encoding="utf-8")
    except OSError as exc:
        row["status"] = FAILED
        row["error"] = row["error"] or f"cannot write {out / RUN_FILE}: {exc.strerror or exc}"
    return row


def _load_scenario(scenario_class: Any, data: Mapping[str, Any], base_dir: str, registry: Any) -> Any:
    """The run's Scenario; with out-of-tree plugins, its config is checked against them (the
    scenario format itself knows only the in-tree plugins): as the scenario checks it, at ``config``."""
    raw = data.get("config")
    if registry is None or not isinstance(raw, (str, Mapping)):
        return scenario_class.load(data, base_dir=base_dir)
    from ..config import ConfigError
    from ..scheduler.config_check import check_config
    from .spec import SpecError

    rest = {k: v for k, v in data.items() if k != "config"}
    scenario = scenario_class.load(rest, base_dir=base_dir)
    if isinstance(raw, str) and "\n" not in raw:
        file = Path(raw) if os.path.isabs(raw) else Path(base_dir) / raw
        if not file.is_file():
            raise SpecError("config", f"no such file {str(file)!r}")
        raw = str(file)
    try:
        config = check_config(dict(raw) if isinstance(raw, Mapping) else raw, registry=registry,
                              feature_gates=scenario.feature_gates)  # GenericWorkload with gang streams
    except ConfigError as exc:
        raise SpecError("config", str(exc)) from None
    scenario.config_source = data.get("config")
    scenario.config = config
    return scenario


def write_data_report(result: Any, out: Path) -> None:
    """The report's data files without plots: summary.json, pods.csv, timeseries.csv."""
    (out / "summary.json").write_text(json.dumps(result.summary, indent=1, default=str), encoding="utf-8")
    for name, rows in (("pods.csv", [r.as_row() for r in result.records]), ("timeseries.csv", result.timeseries)):
        fields: list[str] = list(result.records[0].CSV_FIELDS) if name == "pods.csv" and result.records else []
        for row in rows:
            fields.extend(k for k in row if k not in fields)
        with open(out / name, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows({k: _cell(v) for k, v in row.items()} for row in rows)


def flatten(summary: Mapping[str, Any], prefix: str = "") -> dict:
    """Scalar metrics of a summary, nested mappings flattened with dots (lists as JSON text)."""
    out: dict = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = _cell(value)
    return out


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "item"):  # a NumPy scalar
        return _cell(value.item())
    return json.dumps(value, sort_keys=True, default=str)


# ------------------------------------------------------------------------------------------------
# the sweep
# ------------------------------------------------------------------------------------------------
Progress = Callable[[int, int, dict], None]


def sweep(spec: Any, *, out: str | os.PathLike, executor: cf.Executor | None = None, workers: int | None = None,
          dask: str | None = None, local_dask: int | None = None, resume: bool = True,
          record: str | None = "failures", report: str = FULL_REPORT,
          progress: Progress | None = None, plugins: Sequence[Any] | None = None,
          registry: Mapping[str, Any] | None = None) -> SweepResult:
    """Run every run of ``spec`` (a sweep file, YAML text, a mapping or a :class:`Sweep`) and write
    the table and the per-run reports into ``out`` (see the module docstring).

    Where the runs go: ``executor`` (any :class:`concurrent.futures.Executor`), else a Dask cluster
    at ``dask`` (a scheduler address), else a local Dask cluster of ``local_dask`` worker
    processes, else a process pool of ``workers`` processes (default: the CPU count).
    ``progress(done, total, row)`` is called as each run ends. ``record`` is the simulations'
    decision-record mode; ``report`` the per-run report: ``"full"`` (``fastsched simulate``'s,
    plots included) or ``"data"`` (summary.json, pods.csv and timeseries.csv only: much faster
    for many small runs).

    Out-of-tree plugins: ``plugins`` adds entries to the sweep's own ``plugins`` (the same forms,
    files relative to the working directory; errors name them ``plugins[i]``, counting after the
    sweep's); ``registry`` is a :class:`~fastsched.runtime.Registry` (or mapping of plugin name ->
    factory) shipped to the workers by pickle. Both are merged into every run's in-tree registry.
    """
    if report not in REPORT_KINDS:
        raise SweepError(f"report must be one of {', '.join(REPORT_KINDS)}, got {report!r}")
    if local_dask is not None and local_dask < 1:
        raise SweepError(f"a local Dask cluster needs at least 1 worker, got {local_dask}")
    plan = load_sweep(spec)
    specs = list(plan.plugins)
    if plugins:
        if isinstance(plugins, (str, Mapping)):
            plugins = [plugins]
        specs += parse_plugin_specs(list(plugins), Path.cwd(), "plugins", start=len(specs))
    if registry is not None and not isinstance(registry, Mapping):
        raise SweepError(f"registry: must be a Registry or a mapping of plugin name -> factory, "
                         f"got {type(registry).__name__}")
    registry = dict(registry) if registry else None
    plugin_registry(specs, registry)  # they import and their names are free, else an error naming the entry
    plugins_key = _plugins_digest(specs, registry)
    plugin_tasks = [s.as_task() for s in specs]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs_dir = out_dir / "runs"
    rows: dict[str, dict] = {}
    todo: list[dict] = []
    for run in plan.runs:
        key = run.key if not plugins_key else hashlib.sha256(f"{run.key}:{plugins_key}".encode()).hexdigest()[:20]
        task: dict[str, Any] = {"name": run.name, "params": run.params, "seed": run.seed, "scenario": run.scenario,
                "base_dir": run.base_dir, "dir": str(runs_dir / run.name), "key": key, "record": record,
                "report": report, "plugins": plugin_tasks, "registry": registry}
        previous = _finished_row(runs_dir / run.name, key) if resume else None
        if previous is not None:
            rows[run.name] = previous
        else:
            todo.append(task)
    total = len(plan.runs)
    done = len(rows)
    if progress is not None:
        progress(done, total, {})
    if todo:
        with _executor(executor, workers, dask, local_dask, len(todo)) as pool:
            futures = {pool.submit(run_task, task): task for task in todo}
            for future in cf.as_completed(futures):
                task = futures[future]
                try:
                    row = future.result()
                except BaseException as exc:  # noqa: BLE001 - a worker that died: the run failed
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    row = _crashed_row(task, exc)
                rows[task["name"]] = row
                done += 1
                if progress is not None:
                    progress(done, total, row)
    ordered = [rows[run.name] for run in plan.runs]
    files = write_table(ordered, out_dir)
    return SweepResult(rows=ordered, out=out_dir, ran=len(todo), skipped=total - len(todo), files=files)


def _finished_row(run_dir: Path, key: str) -> dict | None:
    """The row of a run finished before with the same parameters, else None."""
    try:
        row = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if row.get("status") != OK or row.get("key") != key or not (run_dir / "summary.json").is_file():
        return None
    return row


def _crashed_row(task: Mapping[str, Any], exc: BaseException) -> dict:
    row = {"run": task["name"], "status": FAILED, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}",
           "seconds": 0.0, "seed": task["seed"], **{f"param.{k}": _cell(v) for k, v in task["params"].items()},
           "key": task["key"]}
    try:
        run_dir = Path(task["dir"])
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / RUN_FILE).write_text(json.dumps(row, indent=1, default=str), encoding="utf-8")
    except OSError:
        pass
    return row


@contextmanager
def _executor(executor: cf.Executor | None, workers: int | None, dask: str | None, local_dask: int | None,
              tasks: int) -> Iterator[cf.Executor]:
    if executor is not None:
        yield executor
        return
    if dask is not None or local_dask is not None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise SweepError("Dask is not installed: pip install 'fastsched[dask]'") from None
        if dask is not None:
            client = Client(dask)
            try:
                yield client.get_executor()
            finally:
                client.close()
            return
        assert local_dask is not None  # no dask address: the local cluster was asked for
        # one thread per worker process: a simulation holds the GIL
        cluster = LocalCluster(n_workers=int(local_dask), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        try:
            yield client.get_executor()
        finally:
            client.close()
            cluster.close()
        return
    n = workers or os.cpu_count() or 1
    with cf.ProcessPoolExecutor(max_workers=max(1, min(n, tasks))) as pool:
        yield pool


def write_table(rows: Sequence[Mapping[str, Any]], out_dir: Path) -> dict[str, Path]:
    """``results.csv`` (and ``results.parquet`` with pyarrow): one row per run, the base columns,
    the parameters, then the metrics in order of first appearance."""
    columns = list(BASE_COLUMNS)
    for row in rows:
        for key in row:
            if key.startswith("param.") and key not in columns:
                columns.append(key)
    for row in rows:
        for key in row:
            if key not in columns and key not in ("traceback", "key"):
                columns.append(key)
    files = {"csv": out_dir / RESULTS_CSV}
    with open(files["csv"], "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return files
    table = pa.table({c: _parquet_column([row.get(c) for row in rows]) for c in columns})
    files["parquet"] = out_dir / RESULTS_PARQUET
    pq.write_table(table, files["parquet"])
    return files


def _parquet_column(values: list) -> list:
    """One type per column: booleans, numbers (ints become floats beside floats), else text."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return values
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        if any(isinstance(v, float) for v in present):
            return [None if v is None else float(v) for v in values]
        return values
    return [None if v is None else str(v) for v in values]
