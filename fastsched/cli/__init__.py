"""The ``fastsched`` command line.

::

    fastsched simulate [SCENARIO] [--out DIR] [--seed N] [--record all|failures|none] [--quiet]
    fastsched bench WORKLOAD [--nodes N] [--pods M] [--init-pods K] [--seed N] [--schedule-init] [--json]
    fastsched perf CONFIG [--name TEST] [--workload NAME] [--label FILTER] [--out FILE]
                   [--fail-under-threshold] [--topic T] [--seed N] [--json] [--list]
    fastsched explain --cluster FILE --pod FILE [--config FILE] [--profile NAME] [--limit N | --all] [--json]
    fastsched capacity --cluster FILE --pod FILE [--pod FILE ...] [--replicas N ...]
                       [--node-template FILE] [--max-nodes N] [--config FILE] [--per-node] [--json]
    fastsched sweep SWEEP.yaml --out DIR [--local-dask N | --dask ADDRESS] [--workers N] [--report full|data]
                    [--no-resume] [--json]
    fastsched config validate FILE
    fastsched config defaults
    fastsched differential [--class C ...] --scenarios N [--seed S] [--out DIR] [--record DIR] [--oracle PATH] [--raw]
    fastsched differential --bench [--bench-nodes N] [--bench-init-pods K] [--bench-pods M]

Every expected failure (missing or unreadable file, a file that is not text, bad YAML, invalid
configuration or scenario, malformed manifest, unknown workload) is a
:class:`~fastsched.errors.FastschedError`: it prints one line ``fastsched: error: ...`` to stderr and
exits with status 1 (2 for command-line usage errors, as argparse does). Set ``FASTSCHED_DEBUG=1``
to get the traceback of an unexpected exception instead of its one-line report.

The package holds one module per command (:mod:`.simulate`, :mod:`.bench`, :mod:`.perf`,
:mod:`.explain`, :mod:`.capacity`, :mod:`.sweep`, :mod:`.config`, :mod:`.differential`), the
helpers they share (:mod:`.common`) and the parser and entry point (:mod:`.parser`);
``fastsched.cli:main`` is the console script.
"""
from __future__ import annotations

from .common import CLIError
from .parser import build_parser, main

__all__ = ["CLIError", "build_parser", "main"]
