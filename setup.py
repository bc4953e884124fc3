"""Builds fastsched's Cython kernels (fastsched/_kernels/*.pyx); metadata lives in pyproject.toml."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup


def kernel(name: str, compile_args: list[str], link_args: list[str] = ()) -> Extension:
    """The extension ``fastsched._kernels.<name>`` built from ``fastsched/_kernels/<name>.pyx``."""
    return Extension(
        f"fastsched._kernels.{name}",
        [f"fastsched/_kernels/{name}.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", *compile_args],
        extra_link_args=list(link_args),
    )


extensions = [
    kernel("_score", ["-fopenmp"], ["-fopenmp"]),
    # no fused multiply-add: float results must round as upstream's Go code does
    kernel("_resources", ["-ffp-contract=off"]),
    # the node table's row accounting and per-row pod lists (integers only)
    kernel("_table", []),
    # the fused scheduling cycle shares _arith.pxd's float scorers: same rounding rule
    kernel("_cycle", ["-ffp-contract=off", "-fopenmp"], ["-fopenmp"]),
    # DefaultPreemption's vectorized dry run (integer sums; start times only compared)
    kernel("_preemption", []),
    # InterPodAffinity's Filter on a window of rows; PodTopologySpread's float Score (upstream's
    # rounding: no fused multiply-add)
    kernel("_interpodaffinity", ["-ffp-contract=off"]),
    # the commit of a collapsed binding (Python objects only: no numeric work of its own)
    kernel("_bind", []),
    # the Filter diagnosis of a pod that fits nowhere (integers only)
    kernel("_diagnosis", []),
    # the template key's exact comparison of manifests (Python objects only)
    kernel("_manifest", []),
    # field getters reading __slots__ members by offset (Python objects only)
    kernel("_getters", []),
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
)
