"""Private compiled kernels (Cython, GIL released). Public code calls them through ``fastsched.runtime``.

The extension modules are built by ``pip install -e .`` (setup.py); importing this package without
them raises an ImportError that says so.
"""
try:
    from . import _score  # noqa: F401
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "fastsched's compiled kernels are not built; install the package with "
        "`pip install -e .` (needs a C compiler, Cython and NumPy)"
    ) from e
