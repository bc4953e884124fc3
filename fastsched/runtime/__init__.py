"""The framework implementation: Registry, new_framework and the run_* methods."""
from .framework import MAX_PERMIT_TIMEOUT, Framework, FrameworkError, new_framework
from .metrics import MetricsRecorder
from .filter_results import FilterResults
from .registry import PluginFactory, Registry, RegistryError, factory_with_args
from .score_matrix import ScoreMatrix, ScoreRangeError, weight_and_check
from .waiting_pods import WaitingPodImpl, WaitingPodsMap

__all__ = [
    "FilterResults", "Framework", "FrameworkError", "MAX_PERMIT_TIMEOUT", "MetricsRecorder", "PluginFactory", "Registry",
    "RegistryError", "ScoreMatrix", "ScoreRangeError", "WaitingPodImpl", "WaitingPodsMap",
    "factory_with_args", "new_framework", "weight_and_check",
]
