"""The node-resources plugins (upstream ``pkg/scheduler/framework/plugins/noderesources``).

* :class:`Fit` — NodeResourcesFit: PreFilter, Filter, PreScore, Score (no NormalizeScore);
* :class:`BalancedAllocation` — NodeResourcesBalancedAllocation: PreScore, Score.

Both have per-node and batch paths that agree exactly. ``FACTORIES`` maps each upstream name to its
factory ``(args, handle) -> plugin``.
"""
from typing import Any, Callable

from .balanced_allocation import NAME as BALANCED_ALLOCATION_NAME
from .balanced_allocation import BalancedAllocation
from .balanced_allocation import new as new_balanced_allocation
from .fit import NAME as FIT_NAME
from .fit import Fit, InsufficientResource, compute_pod_resource_request, fits, fits_request
from .fit import new as new_fit
from .resource_names import is_extended_resource_name, is_scalar_resource_name

#: (the two factories take different args: their common type is a callable of anything)
FACTORIES: dict[str, Callable[..., Any]] = {
    FIT_NAME: new_fit,
    BALANCED_ALLOCATION_NAME: new_balanced_allocation,
}

__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "FIT_NAME",
    "FACTORIES",
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "new_balanced_allocation",
    "new_fit",
]
