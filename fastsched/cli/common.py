"""What every ``fastsched`` command shares: the program name and defaults, :class:`CLIError`, and
the helpers that read files, configurations and manifests and print (to a rich console or JSON).

Kept apart from the commands (one module each) so that each command module is read on its own.
"""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import FastschedError

PROG = "fastsched"
DEFAULT_OUT = "fastsched-report"
#: how many nodes ``explain`` shows by default (the best ones)
EXPLAIN_LIMIT = 10


class CLIError(FastschedError):
    """An expected failure: reported as one line, exit status 1."""


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _console(stderr: bool = False):
    from rich.console import Console

    con = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = 200  # piped or captured: don't squeeze tables into 80 columns
    return con


def _file(path: str, what: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise CLIError(f"{what} file not found: {path}")
    if not p.is_file():
        raise CLIError(f"{what} is not a file: {path}")
    return p


def _config(path: str | None, feature_gates: Any = None) -> Any:
    """The configuration of ``--config``, checked as ``config validate`` checks it (validated and
    built: what is returned, a Scheduler accepts), with ``feature_gates`` (default: v1.37.2's)."""
    from ..config import ConfigError, load_config
    from ..scheduler.config_check import check_config

    if path is None:
        return load_config(None, feature_gates=feature_gates)
    p = _file(path, "config")
    try:
        return check_config(p, feature_gates=feature_gates)
    except ConfigError as exc:
        raise CLIError(f"invalid config {path}: {_one_line(str(exc))}") from None


def _objects(path: str, what: str, strict: bool = False, *, directory: bool = False,
             feature_gates: Any = None) -> list:
    """The objects of a manifest file (or, with ``directory``, a directory of them), as
    ``Scheduler.add`` reads them (with ``feature_gates``, as an API server with those gates)."""
    from ..api import ManifestError, load_objects

    p = Path(path)
    if not (directory and p.is_dir()):
        p = _file(path, what)
    try:
        return load_objects(p, strict=strict, feature_gates=feature_gates)
    except ManifestError as exc:
        raise CLIError(f"{what} {_one_line(str(exc))}") from None


def _one_pod(path: str, strict: bool = False, feature_gates: Any = None) -> Any:
    from ..api import Pod

    objs = _objects(path, "pod", strict, feature_gates=feature_gates)
    pods = [o for o in objs if isinstance(o, Pod)]
    if len(pods) != 1 or len(objs) != 1:
        kinds = ", ".join(type(o).__name__ for o in objs) or "nothing"
        raise CLIError(f"pod {path}: expected exactly one Pod manifest, found {kinds}")
    return pods[0]


def _json_out(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:,.{digits}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _check_out_dir(out: str) -> None:
    """Fail now, not after the simulation, when the report cannot be written to ``out``: it must
    be a writable directory, or creatable (its nearest existing ancestor a writable directory)."""
    import errno

    from ..sim.report import REPORT_FILES

    def fail(code: int, where: Path) -> None:
        detail = os.strerror(code) + ("" if str(where) == str(out) else f": {where}")
        raise CLIError(f"cannot write the report to {out}: {detail}")

    p = Path(out)
    if p.exists():
        if not p.is_dir():
            fail(errno.ENOTDIR, p)
        if not os.access(p, os.W_OK | os.X_OK):
            fail(errno.EACCES, p)
        for name in REPORT_FILES:
            f = p / name
            if f.is_dir():
                fail(errno.EISDIR, f)
            if f.exists() and not os.access(f, os.W_OK):
                fail(errno.EACCES, f)
        return
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        fail(errno.ENOTDIR, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        fail(errno.EACCES, parent)


def _error(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {_one_line(message)}\n")
    sys.stderr.flush()
