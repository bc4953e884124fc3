"""``fastsched config validate`` and ``fastsched config defaults``.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import located
from .common import CLIError, _file, _one_line


def cmd_config_validate(args: argparse.Namespace) -> int:
    """Load, validate and build every profile (and extender) as a Scheduler would: a config this
    calls valid is one ``Scheduler`` accepts. Each problem is printed as ``FILE: <field>: <reason>``."""
    from ..config import ConfigError
    from ..scheduler.config_check import check_config

    p = _file(args.file, "config")
    try:
        check_config(p)
    except ConfigError as exc:
        if not exc.errors:  # the document as a whole (unreadable, bad YAML)
            raise CLIError(f"invalid config {args.file}: {_one_line(str(exc))}") from None
        for line in exc.with_source(args.file).lines():
            print(_one_line(line))
        n = len(exc.errors)
        raise CLIError(f"invalid config {args.file}: {n} error{'s' if n > 1 else ''}") from None
    print(located("valid", source=args.file))
    return 0


def cmd_config_defaults(args: argparse.Namespace) -> int:
    from ..config import dump_config, load_config

    sys.stdout.write(dump_config(load_config(None)))
    return 0
