"""Defaulting (upstream ``pkg/scheduler/apis/config/v1/{defaults.go,default_plugins.go}``, v1.34).

The default plugins are carried as MultiPoint; a profile's own PluginSets are merged into them per
extension point by :func:`merge_plugin_set`. Every enabled in-tree plugin with an args kind and no
explicit ``pluginConfig`` gets a defaulted args object, appended in plugin-name order.
"""

from __future__ import annotations

from dataclasses import replace

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

#: The v1.34 default MultiPoint list, in order (it is the per-extension-point order).
#: DynamicResources is there because the DynamicResourceAllocation gate is GA and on in v1.34;
#: upstream inserts it just before DefaultPreemption.
DEFAULT_PLUGINS: tuple[Plugin, ...] = (
    Plugin("SchedulingGates"),
    Plugin("PrioritySort"),
    Plugin("NodeUnschedulable"),
    Plugin("NodeName"),
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
    Plugin("DynamicResources"),
    Plugin("DefaultPreemption"),
    Plugin("NodeResourcesBalancedAllocation", 1),
    Plugin("ImageLocality", 1),
    Plugin("DefaultBinder"),
)

#: Plugins registered in the v1.34 in-tree registry.
IN_TREE_PLUGINS: frozenset[str] = frozenset(p.name for p in DEFAULT_PLUGINS)

DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
#: ``DefaultExtenderTimeout``; upstream applies it when the extender is built, here when defaulting.
DEFAULT_EXTENDER_TIMEOUT = 5.0


def default_plugins() -> Plugins:
    """A fresh :class:`Plugins` holding the default set as MultiPoint."""
    return Plugins(multi_point=PluginSet(enabled=[replace(p) for p in DEFAULT_PLUGINS]))


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


def enabled_plugin_names(plugins: Plugins | None) -> list[str]:
    """Names enabled at any extension point (MultiPoint included), sorted (upstream ``pluginsNames``)."""
    if plugins is None:
        return []
    return sorted({p.name for ep in EXTENSION_POINTS for p in getattr(plugins, ep).enabled})


def set_profile_defaults(profile: KubeSchedulerProfile) -> None:
    """Upstream ``setDefaults_KubeSchedulerProfile``: merge plugins, default and append args."""
    profile.plugins = merge_plugins(default_plugins(), profile.plugins)
    configured = set()
    for pc in profile.plugin_config:
        configured.add(pc.name)
        if isinstance(pc.args, PluginArgs):
            pc.args.set_defaults()
        elif pc.args is None and pc.name in ARGS_TYPES:
            pc.args = ARGS_TYPES[pc.name]()
    for name in enabled_plugin_names(profile.plugins):
        if name in configured or name not in ARGS_TYPES:
            continue
        args = ARGS_TYPES[name]()
        args.set_defaults()
        profile.plugin_config.append(PluginConfig(name=name, args=args))


def set_defaults(cfg: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """Upstream ``SetDefaults_KubeSchedulerConfiguration`` (v1.34), in place; returns ``cfg``.

    ``None`` marks an unset optional field (as a nil pointer does upstream); zero values that
    upstream treats as unset (QPS, burst, durations, empty strings) are defaulted too.
    """
    if cfg.parallelism is None:
        cfg.parallelism = 16
    if not cfg.profiles:
        cfg.profiles.append(KubeSchedulerProfile(scheduler_name=None))
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for profile in cfg.profiles:
        if profile.scheduler_name is None:
            profile.scheduler_name = ""  # validation reports it as required
        set_profile_defaults(profile)
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
