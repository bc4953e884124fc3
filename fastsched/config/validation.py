"""Validation (upstream ``ValidateKubeSchedulerConfiguration``, ``validation.go``, v1.37.2).

Checks run in upstream's order and every problem is reported, as one :class:`ConfigError`.

Upstream behaviour mirrored on purpose:

* Args validators are keyed by plugin name, but NodeResourcesFit's key is ``"NodeResourcesFitArgs"``,
  so NodeResourcesFit's args are *not* validated here; upstream validates them when the plugin
  is built (``NewFit``), so the runtime must call :meth:`NodeResourcesFitArgs.validate` there.
* Removed plugins are checked at every extension point except MultiPoint, PlacementGenerate and
  PlacementScore (v1.37's ``validatePluginConfig`` lists PodGroupPostFilter only), and in pluginConfig.
* A queueSort problem in the first profile is reported at ``profiles[0].plugins.queueSort.Enabled``
  (capital E), a queueSort args mismatch at ``profiles[i].pluginConfig.args`` (no index).
* There is no rule on Score weights in upstream validation: the v1 decoder rejects weights outside
  int32 and framework construction only guards the (int32-unreachable) total-score overflow. Here a
  weight outside int32 is reported, so configs built in Python get the check the decoder gives YAML.

Deviation: a duplicate schedulerName reports the duplicated name as its value; upstream passes
the earlier profile's field path, which apimachinery's JSON rendering turns into ``{}``.

Added here (upstream ignores such entries): a ``pluginConfig`` whose name is neither an in-tree
plugin, nor in ``registry_names``, nor enabled at any extension point of its profile is an error at
``profiles[i].pluginConfig[j].name``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._decode import INT32_RANGE, format_duration
from ._names import is_extended_resource_name, is_qualified_name
from .args import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)
from .defaults import IN_TREE_PLUGINS, enabled_plugin_names
from .errors import ConfigError
from ..util.field import FieldError, FieldPath, GoStruct, Rendered, go_json
from .types import (
    EXTENSION_POINTS,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    PluginSet,
)

#: Upstream's args-validator table, keys verbatim (hence ``"NodeResourcesFitArgs"``).
ARGS_VALIDATORS: dict[str, type[PluginArgs]] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFitArgs": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
    "DynamicResources": DynamicResourcesArgs,
}

#: Plugins removed from the v1 API (``invalidPluginsByVersion``).
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
REMOVED_IN_VERSION = "kubescheduler.config.k8s.io/v1"

#: The points ``validatePluginConfig``'s ``stagesToPluginSet`` leaves out (v1.37.2).
_NOT_CHECKED_FOR_REMOVED = frozenset({"multi_point", "placement_generate", "placement_score"})

#: Upstream's extension-point JSON names (snake_case attribute → camelCase).
EXTENSION_POINT_JSON = {ep: ep.split("_")[0] + "".join(w.title() for w in ep.split("_")[1:]) for ep in EXTENSION_POINTS}


def validate_config(cfg: KubeSchedulerConfiguration, *, registry_names: Iterable[str] = (),
                    feature_gates: Any = None) -> None:
    """Raise one :class:`ConfigError` listing every problem in ``cfg`` (a defaulted config);
    ``feature_gates`` (default: v1.37.2's) decide what plugin args may hold."""
    errs = validation_errors(cfg, registry_names=registry_names, feature_gates=feature_gates)
    if errs:
        raise ConfigError(errs)


def validation_errors(cfg: KubeSchedulerConfiguration, *, registry_names: Iterable[str] = (),
                      feature_gates: Any = None) -> list[FieldError]:
    """Every problem in ``cfg`` as :class:`FieldError` objects, in upstream's order."""
    from ..features import FeatureGates

    known = IN_TREE_PLUGINS | frozenset(registry_names)
    gates = feature_gates if isinstance(feature_gates, FeatureGates) else FeatureGates(feature_gates)
    errs: list[FieldError] = []
    errs += _client_connection_errors(cfg, FieldPath("clientConnection"))
    errs += _leader_election_errors(cfg, FieldPath("leaderElection"))
    le = cfg.leader_election
    if le.leader_elect and le.resource_lock != "leases":
        errs.append(
            FieldError.invalid("leaderElection.resourceLock", le.resource_lock, 'resourceLock value must be "leases"')
        )
    if cfg.parallelism is None or cfg.parallelism <= 0:
        errs.append(FieldError.invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))

    profiles_path = FieldPath("profiles")
    if not cfg.profiles:
        errs.append(FieldError.required(profiles_path))
    else:
        first_index: dict[str | None, int] = {}
        for i, profile in enumerate(cfg.profiles):
            path = profiles_path.index(i)
            errs += _profile_errors(path, cfg.api_version, profile, known, gates)
            if profile.scheduler_name in first_index:
                # Upstream passes the first profile's *path* as the value, which renders badly;
                # the duplicated name is reported instead.
                errs.append(FieldError.duplicate(path.child("schedulerName"), profile.scheduler_name))
            first_index.setdefault(profile.scheduler_name, i)
        errs += _common_queue_sort_errors(profiles_path, cfg.profiles)

    errs += _percentage_errors(FieldPath("percentageOfNodesToScore"), cfg.percentage_of_nodes_to_score)
    initial, maximum = cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds
    if initial is None or initial <= 0:
        errs.append(FieldError.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum is None or (initial is not None and maximum < initial):
        errs.append(
            FieldError.invalid(
                "podMaxBackoffSeconds", maximum, "must be greater than or equal to PodInitialBackoffSeconds"
            )
        )
    errs += _extender_errors(FieldPath("extenders"), cfg.extenders)
    return errs


# --------------------------------------------------------------------------------------------


def _client_connection_errors(cfg: KubeSchedulerConfiguration, path: FieldPath) -> list[FieldError]:
    burst = cfg.client_connection.burst
    return [FieldError.invalid(path.child("burst"), burst, "must be non-negative")] if burst < 0 else []


def _leader_election_errors(cfg: KubeSchedulerConfiguration, path: FieldPath) -> list[FieldError]:
    le = cfg.leader_election
    if not le.leader_elect:
        return []
    errs = []
    for name, value in (
        ("leaseDuration", le.lease_duration),
        ("renewDeadline", le.renew_deadline),
        ("retryPeriod", le.retry_period),
    ):
        if value <= 0:
            errs.append(FieldError.invalid(path.child(name), format_duration(value), "must be greater than zero"))
    if le.lease_duration < le.renew_deadline:
        errs.append(
            FieldError.invalid(
                path.child("leaseDuration"),
                format_duration(le.renew_deadline),
                "LeaseDuration must be greater than RenewDeadline",
            )
        )
    for name, text in (
        ("resourceLock", le.resource_lock),
        ("resourceNamespace", le.resource_namespace),
        ("resourceName", le.resource_name),
    ):
        if not text:
            errs.append(FieldError.invalid(path.child(name), text, f"{name} is required"))
    return errs


def _percentage_errors(path: FieldPath, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [FieldError.invalid(path, value, "not in valid range [0-100]")]
    return []


def _removed_detail(api_version: str) -> str:
    return f'was invalid in version "{REMOVED_IN_VERSION}" (KubeSchedulerConfiguration is version "{api_version}")'


def _profile_errors(
    path: FieldPath, api_version: str, profile: KubeSchedulerProfile, known: frozenset[str], gates: Any = None
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(FieldError.required(path.child("schedulerName")))
    errs += _percentage_errors(path.child("percentageOfNodesToScore"), profile.percentage_of_nodes_to_score)

    plugins = profile.plugins
    if plugins is not None:
        for ep in EXTENSION_POINTS:
            if ep in _NOT_CHECKED_FOR_REMOVED:
                continue
            ep_path = path.child("plugins", EXTENSION_POINT_JSON[ep], "enabled")
            for i, plugin in enumerate(getattr(plugins, ep).enabled):
                if plugin.name in REMOVED_PLUGINS:
                    errs.append(FieldError.invalid(ep_path.index(i), plugin.name, _removed_detail(api_version)))

    enabled = set(enabled_plugin_names(plugins))
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        pc_path = path.child("pluginConfig").index(i)
        if pc.name in seen:
            errs.append(FieldError.duplicate(pc_path, pc.name))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(FieldError.invalid(pc_path, pc.name, _removed_detail(api_version)))
            continue
        args_type = ARGS_VALIDATORS.get(pc.name)
        if args_type is not None:
            if type(pc.args) is not args_type:
                errs.append(FieldError.invalid(pc_path.child("args"), _args_value(pc.args), "has to match plugin args"))
            elif isinstance(pc.args, VolumeBindingArgs):
                errs += pc.args.validate(pc_path.child("args"), storage_capacity_scoring=gates is not None
                                         and gates.enabled("StorageCapacityScoring"))
            elif isinstance(pc.args, DynamicResourcesArgs):
                errs += pc.args.validate(pc_path.child("args"), feature_gates=gates)
            else:
                errs += pc.args.validate(pc_path.child("args"))
        if pc.name not in known and pc.name not in enabled:
            errs.append(
                FieldError.invalid(
                    pc_path.child("name"),
                    pc.name,
                    "plugin is neither in-tree, nor registered, nor enabled at any extension point of this profile",
                )
            )

    if plugins is not None:
        lo, hi = INT32_RANGE
        for ep in EXTENSION_POINTS:
            ep_path = path.child("plugins", EXTENSION_POINT_JSON[ep], "enabled")
            for i, plugin in enumerate(getattr(plugins, ep).enabled):
                if not lo <= plugin.weight <= hi:
                    errs.append(
                        FieldError.invalid(
                            ep_path.index(i).child("weight"), plugin.weight, f"not in valid range [{lo}, {hi}]"
                        )
                    )
    return errs


def _args_value(args: Any) -> Any:
    """An args object rendered as upstream would in an error."""
    if isinstance(args, PluginArgs):
        return Rendered(go_json(GoStruct(args.to_dict())))
    return args


def _plugin_set_value(ps: PluginSet) -> Rendered:
    # The internal PluginSet has no JSON tags: Go field names; an empty list is a nil slice.
    enabled = [GoStruct(Name=p.name, Weight=p.weight) for p in ps.enabled] or None
    disabled = [GoStruct(Name=p.name, Weight=p.weight) for p in ps.disabled] or None
    return Rendered(go_json(GoStruct(Enabled=enabled, Disabled=disabled)))


def _common_queue_sort_errors(path: FieldPath, profiles: list[KubeSchedulerProfile]) -> list[FieldError]:
    """Every profile must have the same queueSort set, with at most one plugin, and the same args."""
    errs = []
    first = profiles[0]
    canon = first.plugins.queue_sort if first.plugins is not None else PluginSet()
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(
            FieldError.invalid(
                path.index(0).child("plugins", "queueSort", "Enabled"),
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    canon_args = None
    if name:
        for pc in first.plugin_config:
            if pc.name == name:
                canon_args = pc.args
    for i in range(1, len(profiles)):
        profile = profiles[i]
        current = profile.plugins.queue_sort if profile.plugins is not None else PluginSet()
        if current != canon:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("plugins", "queueSort"),
                    _plugin_set_value(current),
                    "must be the same for all profiles",
                )
            )
        for pc in profile.plugin_config:
            if pc.name == name and pc.args != canon_args:
                errs.append(
                    FieldError.invalid(
                        path.index(i).child("pluginConfig", "args"),
                        _args_value(pc.args),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def _extender_errors(path: FieldPath, extenders: list[Extender]) -> list[FieldError]:
    errs = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        p = path.index(i)
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(FieldError.invalid(p.child("weight"), ext.weight, "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        for j, resource in enumerate(ext.managed_resources):
            rp = p.child("managedResources").index(j).child("name")
            errs += _extended_resource_name_errors(rp, resource.name)
            if resource.name in managed:
                errs.append(FieldError.invalid(rp, resource.name, "duplicate extender managed resource name"))
            managed.add(resource.name)
    if binders > 1:
        errs.append(
            FieldError.invalid(
                path, f"found {binders} extenders implementing bind", "only one extender can implement bind"
            )
        )
    return errs


def _extended_resource_name_errors(path: FieldPath, name: str) -> list[FieldError]:
    problems = is_qualified_name(name)
    if problems:
        return [FieldError.invalid(path, name, msg) for msg in problems]
    if not is_extended_resource_name(name):
        return [FieldError.invalid(path, name, "is an invalid extended resource name")]
    return []
