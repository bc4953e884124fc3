"""NodeDeclaredFeatures (upstream ``plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``, v1.37.2).

Filters out nodes that do not declare (``status.declaredFeatures``) every feature the pod's spec
needs, as inferred by :mod:`.ndf` (upstream ``k8s.io/component-helpers/nodedeclaredfeatures``):
RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport, VolumeBindMountOptions.
"""
from .ndf import ALL_FEATURES, COMPONENT_VERSION, DEFAULT_FRAMEWORK, Feature, Framework
from .node_declared_features import (ERR_REASON_UNSATISFIED_REQUIREMENTS, NAME, PRE_FILTER_STATE_KEY,
                                     NodeDeclaredFeatures, PreFilterState, is_pod_resize_deferred, new)

__all__ = ["ALL_FEATURES", "COMPONENT_VERSION", "DEFAULT_FRAMEWORK", "ERR_REASON_UNSATISFIED_REQUIREMENTS", "Feature",
           "Framework", "NAME", "NodeDeclaredFeatures", "PRE_FILTER_STATE_KEY", "PreFilterState",
           "is_pod_resize_deferred", "new"]
