#!/usr/bin/env python3
"""Rewrite the gate table of ``docs/reference/feature-gates.md`` from ``fastsched.features``.

Developer script: the table is one row per gate of ``KNOWN_GATES`` (name, v1.37.2 default, stage,
what fastsched does with it, what follows it), in ``KNOWN_GATES``' order, between the page's
header row and the first line after the table. ``tests/docs/test_docs.py`` fails when the page
differs from what this script writes, so a gate made switchable (or added) cannot leave the page
behind::

    python3 tools/generate_feature_gates_table.py          # rewrite the table
    python3 tools/generate_feature_gates_table.py --check  # exit 1 if the page is stale
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "feature-gates.md"
HEADER = "| gate | v1.37.2 default | stage | in fastsched | what follows it in fastsched |"


def rows() -> list[str]:
    """The table's rows, one per known gate."""
    sys.path.insert(0, str(ROOT))
    from fastsched.features import KNOWN_GATES

    out = [HEADER, "|---|---|---|---|---|"]
    for gate in KNOWN_GATES.values():
        kind = "locked" if gate.locked else "switchable" if gate.switchable else "fixed"
        follows = gate.modelled_by + (f" (needs {', '.join(gate.depends_on)})" if gate.depends_on else "")
        out.append(f"| `{gate.name}` | {str(gate.default).lower()} | {gate.stage} | {kind} | {follows} |")
    return out


def rendered(text: str) -> str:
    """``text`` (the page) with its table replaced by :func:`rows`."""
    lines = text.split("\n")
    start = lines.index(HEADER)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[:start] + rows() + lines[end:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page's table is stale")
    args = parser.parse_args()
    text = PAGE.read_text()
    new = rendered(text)
    if args.check:
        if new != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run {Path(__file__).relative_to(ROOT)}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
