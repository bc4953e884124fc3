"""Check a built sdist and wheel of fastsched before they reach a user: every file the package needs
at run time is in both, so a file missing from the package data shows here, not on a user's machine.

Usage (from the repository root, after ``python -m build --outdir DIST``)::

    python tools/check_dist.py DIST

Checks:
- the wheel holds every module of ``fastsched/`` that git tracks (``.py``), the compiled kernels
  (one extension module per ``_kernels/*.pyx``), the package data (``py.typed``, ``_schema.json``,
  the report's templates, the kernels' ``.pyx``/``.pxd``) and the license;
- the sdist holds every tracked file needed to build: ``pyproject.toml``, ``setup.py``, the
  README, the license, the changelog and every tracked file under ``fastsched/``.
Exits 1 listing what is missing, 0 printing what was checked.
"""
from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: data files the package reads at run time, as paths inside the package
PACKAGE_DATA = ("fastsched/py.typed", "fastsched/api/_schema.json")
BUILD_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "CHANGELOG.md")


def tracked(prefix: str) -> list[str]:
    """Files git tracks under ``prefix`` (paths relative to the repository root)."""
    out = subprocess.run(["git", "ls-files", prefix], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def wheel_missing(wheel: Path, package_files: list[str]) -> list[str]:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in package_files if f.endswith(".py") and f not in names]
    missing += [f for f in PACKAGE_DATA if f not in names]
    missing += [f for f in package_files if f.startswith("fastsched/sim/templates/") and f not in names]
    missing += [f for f in package_files if f.startswith("fastsched/_kernels/") and f.endswith((".pyx", ".pxd"))
                and f not in names]
    for pyx in (f for f in package_files if f.endswith(".pyx")):
        stem = pyx[:-len(".pyx")]
        if not any(n.startswith(stem + ".") and n.endswith((".so", ".pyd")) for n in names):
            missing.append(f"{stem}.*.so (compiled from {pyx})")
    if not any(n.endswith((".dist-info/LICENSE", ".dist-info/licenses/LICENSE")) for n in names):
        missing.append("*.dist-info/licenses/LICENSE")
    return missing


def sdist_missing(sdist: Path, package_files: list[str]) -> list[str]:
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    wanted = [*BUILD_FILES, *package_files]
    return [f for f in wanted if f not in names]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    dist = Path(argv[0])
    wheels, sdists = sorted(dist.glob("fastsched-*.whl")), sorted(dist.glob("fastsched-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"check_dist: want one wheel and one sdist in {dist}, found {[p.name for p in (*wheels, *sdists)]}",
              file=sys.stderr)
        return 1
    package_files = tracked("fastsched")
    missing = [f"wheel {wheels[0].name}: {m}" for m in wheel_missing(wheels[0], package_files)]
    missing += [f"sdist {sdists[0].name}: {m}" for m in sdist_missing(sdists[0], package_files)]
    if missing:
        print("check_dist: missing from the distributions:", *missing, sep="\n  ", file=sys.stderr)
        return 1
    print(f"check_dist: {wheels[0].name} and {sdists[0].name} hold the {len(package_files)} tracked package files "
          "they need (modules, kernels, package data, license)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
