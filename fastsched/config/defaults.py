"""Defaulting (upstream ``pkg/scheduler/apis/config/v1/{defaults.go,default_plugins.go}``, v1.37.2).

The default plugins are carried as MultiPoint; a profile's own PluginSets are merged into them per
extension point by :func:`merge_plugin_set`. Every enabled in-tree plugin with an args kind and no
explicit ``pluginConfig`` gets a defaulted args object, appended in plugin-name order.

Some defaults depend on the feature gates, as upstream's read ``feature.DefaultFeatureGate``: the
plugin list (``applyFeatureGates``) and VolumeBinding's and DynamicResources' args. Every function
here takes the gates (a :class:`~fastsched.features.FeatureGates`, a mapping, or None for the
defaults).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .args import ARGS_TYPES, PluginArgs
from .types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)

#: ``getDefaultPlugins``' list before ``applyFeatureGates`` (v1.37.2; NodeName moved ahead of
#: NodeUnschedulable in 1.35).
_BASE_PLUGINS: tuple[Plugin, ...] = (
    Plugin("SchedulingGates"),
    Plugin("PrioritySort"),
    Plugin("NodeName"),
    Plugin("NodeUnschedulable"),
    Plugin("TaintToleration", 3),
    Plugin("NodeAffinity", 2),
    Plugin("NodePorts"),
    Plugin("NodeResourcesFit", 1),
    Plugin("VolumeRestrictions"),
    Plugin("NodeVolumeLimits"),
    Plugin("VolumeBinding"),
    Plugin("VolumeZone"),
    Plugin("PodTopologySpread", 2),
    Plugin("InterPodAffinity", 2),
    Plugin("DefaultPreemption"),
    Plugin("NodeResourcesBalancedAllocation", 1),
    Plugin("ImageLocality", 1),
    Plugin("DefaultBinder"),
)


def _gates(feature_gates: Any) -> Any:
    """A FeatureGates for ``feature_gates``; an object that answers ``enabled(name)`` itself is
    taken as it is (tests set gates fastsched fixes, as upstream's tests set emulated versions)."""
    from ..features import DEFAULTS, FeatureGates

    if feature_gates is None:
        return DEFAULTS
    if isinstance(feature_gates, FeatureGates) or callable(getattr(feature_gates, "enabled", None)):
        return feature_gates
    return FeatureGates(feature_gates)


def default_plugin_list(feature_gates: Any = None) -> tuple[Plugin, ...]:
    """Upstream ``getDefaultPlugins``: the base list with ``applyFeatureGates`` applied for
    ``feature_gates`` (default: v1.37.2's)."""
    gates = _gates(feature_gates)
    plugins = list(_BASE_PLUGINS)
    if gates.enabled("NodeDeclaredFeatures"):
        plugins.append(Plugin("NodeDeclaredFeatures"))
    if gates.enabled("InPlacePodVerticalScalingSchedulerPreemption"):
        # applyDeferredPodScheduling: before NodeResourcesFit, else at the end
        at = next((i for i, p in enumerate(plugins) if p.name == "NodeResourcesFit"), len(plugins))
        plugins.insert(at, Plugin("DeferredPodScheduling"))
    if gates.enabled("DynamicResourceAllocation"):
        # applyDynamicResources: just before DefaultPreemption (a claim is deallocated before a
        # pod is evicted), weight 2 since it scores (1.35)
        for i, p in enumerate(plugins):
            if p.name == "DefaultPreemption":
                plugins.insert(i, Plugin("DynamicResources", 2))
                break
    if gates.enabled("GenericWorkload"):
        plugins.append(Plugin("GangScheduling"))
    if gates.enabled("TopologyAwareWorkloadScheduling"):
        plugins += [Plugin("TopologyPlacementGenerator"), Plugin("PodGroupPodsCount", 1)]
    return tuple(plugins)


#: The v1.37.2 default MultiPoint list for the default gates, in order (it is the
#: per-extension-point order).
DEFAULT_PLUGINS: tuple[Plugin, ...] = default_plugin_list()

#: Plugins registered in the v1.37.2 in-tree registry (``registry.go``: ``NewInTreeRegistry``),
#: whatever the gates: a profile may name one the default list leaves out.
IN_TREE_PLUGINS: frozenset[str] = frozenset(p.name for p in _BASE_PLUGINS) | frozenset({
    "DynamicResources", "NodeDeclaredFeatures", "DeferredPodScheduling", "GangScheduling", "TopologyPlacementGenerator",
    "PodGroupPodsCount"})

DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
#: ``DefaultExtenderTimeout``; upstream applies it when the extender is built, here when defaulting.
DEFAULT_EXTENDER_TIMEOUT = 5.0


def default_plugins(feature_gates: Any = None) -> Plugins:
    """A fresh :class:`Plugins` holding the default set (for ``feature_gates``) as MultiPoint."""
    return Plugins(multi_point=PluginSet(enabled=[replace(p) for p in default_plugin_list(feature_gates)]))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream ``mergePluginSet``.

    Disabled is the user's names then the default's. Unless ``"*"`` is disabled, the default enabled
    plugins are kept in order minus the disabled ones, a default the user also enables being
    replaced in place by the user's entry; the user's other enabled entries follow, in order
    (duplicates included: framework construction rejects them).
    """
    disabled = [Plugin(p.name) for p in (*custom.disabled, *default.disabled)]
    disabled_names = {p.name for p in disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            i = custom_index.get(plugin.name)
            if i is not None:
                plugin = custom.enabled[i]
                replaced.add(i)
            enabled.append(replace(plugin))
    enabled.extend(replace(p) for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Upstream ``mergePlugins``: :func:`merge_plugin_set` at every extension point incl. MultiPoint."""
    if custom is None:
        return default
    return Plugins(**{ep: merge_plugin_set(getattr(default, ep), getattr(custom, ep)) for ep in EXTENSION_POINTS})


#: The points upstream's ``pluginsNames`` (v1 ``defaults.go``) reads: every one but PodGroupPostFilter,
#: so a plugin enabled only there gets no default args.
_NAMED_POINTS = tuple(ep for ep in EXTENSION_POINTS if ep != "pod_group_post_filter")


def enabled_plugin_names(plugins: Plugins | None) -> list[str]:
    """Names enabled at any extension point (MultiPoint included, PodGroupPostFilter not), sorted
    (upstream ``pluginsNames``)."""
    if plugins is None:
        return []
    return sorted({p.name for ep in _NAMED_POINTS for p in getattr(plugins, ep).enabled})


def _default_args(args: PluginArgs, gates: Any) -> None:
    # the kinds whose defaults read the gates take them (SetDefaults_VolumeBindingArgs,
    # SetDefaults_DynamicResourcesArgs); the others (and out-of-tree kinds) do not
    if getattr(args, "GATED_DEFAULTS", False):
        args.set_defaults(feature_gates=gates)  # type: ignore[call-arg]
    else:
        args.set_defaults()


def set_profile_defaults(profile: KubeSchedulerProfile, feature_gates: Any = None) -> None:
    """Upstream ``setDefaults_KubeSchedulerProfile``: merge plugins, default and append args."""
    gates = _gates(feature_gates)
    profile.plugins = merge_plugins(default_plugins(gates), profile.plugins)
    configured = set()
    for pc in profile.plugin_config:
        configured.add(pc.name)
        if isinstance(pc.args, PluginArgs):
            _default_args(pc.args, gates)
        elif pc.args is None and pc.name in ARGS_TYPES:
            pc.args = ARGS_TYPES[pc.name]()
    for name in enabled_plugin_names(profile.plugins):
        if name in configured or name not in ARGS_TYPES:
            continue
        args = ARGS_TYPES[name]()
        _default_args(args, gates)
        profile.plugin_config.append(PluginConfig(name=name, args=args))


def set_defaults(cfg: KubeSchedulerConfiguration, feature_gates: Any = None) -> KubeSchedulerConfiguration:
    """Upstream ``SetDefaults_KubeSchedulerConfiguration`` (v1.37.2), in place; returns ``cfg``.
    ``feature_gates`` (default: v1.37.2's) decide the gate-dependent defaults.

    ``None`` marks an unset optional field (as a nil pointer does upstream); zero values that
    upstream treats as unset (QPS, burst, durations, empty strings) are defaulted too.
    """
    if cfg.parallelism is None:
        cfg.parallelism = 16
    if not cfg.profiles:
        # None: unset (v1 has *string), defaulted just below as upstream does
        cfg.profiles.append(KubeSchedulerProfile(scheduler_name=None))  # type: ignore[arg-type]
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for profile in cfg.profiles:
        if profile.scheduler_name is None:
            profile.scheduler_name = ""  # validation reports it as required
        set_profile_defaults(profile, feature_gates)
    if cfg.percentage_of_nodes_to_score is None:
        cfg.percentage_of_nodes_to_score = 0

    le = cfg.leader_election
    if le.leader_elect is None:
        le.leader_elect = True
    le.resource_lock = le.resource_lock or "leases"
    le.resource_namespace = le.resource_namespace or "kube-system"
    le.resource_name = le.resource_name or "kube-scheduler"
    le.lease_duration = le.lease_duration or DEFAULT_LEASE_DURATION
    le.renew_deadline = le.renew_deadline or DEFAULT_RENEW_DEADLINE
    le.retry_period = le.retry_period or DEFAULT_RETRY_PERIOD

    cc = cfg.client_connection
    cc.content_type = cc.content_type or "application/vnd.kubernetes.protobuf"
    cc.qps = cc.qps or 50.0
    cc.burst = cc.burst or 100

    if cfg.pod_initial_backoff_seconds is None:
        cfg.pod_initial_backoff_seconds = 1
    if cfg.pod_max_backoff_seconds is None:
        cfg.pod_max_backoff_seconds = 10
    if cfg.enable_profiling is None:
        cfg.enable_profiling = True
    if cfg.enable_contention_profiling is None:
        # Upstream sets it only when profiling is on; an unset pointer then converts to false.
        cfg.enable_contention_profiling = bool(cfg.enable_profiling)
    if cfg.delay_cache_until_active is None:
        cfg.delay_cache_until_active = False

    for ext in cfg.extenders:
        if not ext.http_timeout:
            ext.http_timeout = DEFAULT_EXTENDER_TIMEOUT
    return cfg
