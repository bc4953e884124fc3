"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``) for fastsched, v1.37 semantics.

:func:`load_config` decodes a v1 document strictly, applies upstream's defaults (including the
default plugin set and plugin args) and validates it; :func:`dump_config` writes the v1 YAML back.
"""

from .args import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    TopologySpreadConstraint,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from .defaults import DEFAULT_PLUGINS, IN_TREE_PLUGINS, default_plugins, merge_plugin_set, merge_plugins, set_defaults
from .errors import ConfigError
from ..util.field import ErrorType, FieldError, FieldPath
from .load import config_to_dict, decode_config, dump_config, load_config
from .types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from .validation import validate_config, validation_errors

__all__ = [
    "API_VERSION",
    "ARGS_TYPES",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "IN_TREE_PLUGINS",
    "KIND",
    "ClientConnectionConfiguration",
    "ConfigError",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "ErrorType",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "FieldError",
    "FieldPath",
    "InterPodAffinityArgs",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "Plugin",
    "PluginArgs",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "TopologySpreadConstraint",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "config_to_dict",
    "decode_config",
    "default_plugins",
    "dump_config",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "set_defaults",
    "validate_config",
    "validation_errors",
]
