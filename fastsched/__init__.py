"""fastsched: the Kubernetes scheduling framework (kube-scheduler v1.37 semantics) on vectorized kernels.

Subpackages mirror upstream's map: ``api`` (the object model), ``framework`` (the plugin contract),
``runtime`` (the framework implementation), ``config`` (KubeSchedulerConfiguration), ``plugins``.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"
#: The kube-scheduler release whose semantics fastsched follows.
UPSTREAM_VERSION = "v1.37"

# Top-level names resolve lazily so `import fastsched` stays cheap and subpackages load on use.
_LAZY = {
    "load_config": ("fastsched.config", "load_config"),
    "check_config": ("fastsched.scheduler.config_check", "check_config"),
    "KubeSchedulerConfiguration": ("fastsched.config", "KubeSchedulerConfiguration"),
    "Registry": ("fastsched.runtime", "Registry"),
    "new_framework": ("fastsched.runtime", "new_framework"),
    "Pod": ("fastsched.api", "Pod"),
    "explain": ("fastsched.scheduler.explain", "explain"),
    "Scheduler": ("fastsched.scheduler", "Scheduler"),
    "Explanation": ("fastsched.scheduler.explain", "Explanation"),
    "in_tree_registry": ("fastsched.plugins", "in_tree_registry"),
    "Node": ("fastsched.api", "Node"),
    "sweep": ("fastsched.sim.sweep", "sweep"),
}

__all__ = ["UPSTREAM_VERSION", "__version__", *_LAZY]


def __getattr__(name: str):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'fastsched' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
