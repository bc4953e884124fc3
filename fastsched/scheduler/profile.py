"""Profiles: the frameworks of a configuration, built one way for everybody.

Upstream builds them in ``scheduler.New``: the HTTP extenders from ``extenders``, then the
resources an extender manages with ``ignoredByScheduler`` written into every profile's
NodeResourcesFit ``ignoredResources``, then ``profile.NewMap`` (one framework per profile, from the
registry). :class:`~fastsched.scheduler.Scheduler`, :func:`fastsched.explain` and
:func:`fastsched.check_config` (``fastsched config validate``) all build through
:func:`build_profiles`, so what one accepts and how it judges a pod, the others do too (an
``explain`` that skipped the ignoredByScheduler step once reported ``Insufficient
example.com/fpga`` for a pod ``run()`` scheduled).

The steps are also public one by one (:func:`new_extenders`, :func:`apply_ignored_resources`,
:func:`new_registry`, :func:`new_map`), with an ``on_error`` hook: :func:`build_errors` runs them
to report every problem at its field instead of stopping at the first, for the configuration check
and for :func:`build_profiles` itself when a build fails (:class:`ProfileBuildError`).
"""
from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..config.errors import ConfigError
from ..config.types import KubeSchedulerConfiguration, KubeSchedulerProfile
from ..config.validation import EXTENSION_POINT_JSON
from ..runtime import FrameworkError, Registry, new_framework
from ..util.field import FieldError, FieldPath, go_quote

__all__ = ["ProfileBuildError", "Profiles", "apply_ignored_resources", "build_errors", "build_profiles",
           "extender_field_error", "ignored_by_extenders", "new_extenders", "new_map", "new_registry",
           "profile_or_error"]

#: the message upstream's scheduler.New returns when a profile has no NodeResourcesFit args to
#: write an extender's ignored resources into
NO_FIT_ARGS = "can't find NodeResourcesFitArgs in plugin config"


class ProfileBuildError(ConfigError, FrameworkError):
    """A configuration that validates but cannot be built into frameworks: each problem at its
    field, with upstream's message after the path (``profiles[0].plugins.multiPoint.enabled[3].name:
    profile "default-scheduler": PreFilterPlugin "Typo" does not exist``). It is a
    :class:`FrameworkError` too, which is what building raised before it said where."""


@dataclass
class Profiles:
    """What :func:`build_profiles` built: the configuration the frameworks were built from (a copy
    of the caller's, with the extenders' ignored resources applied), the registry (in-tree plus
    out-of-tree), the extenders and one framework per profile, by scheduler name, in order."""

    config: KubeSchedulerConfiguration
    registry: Registry
    extenders: list
    frameworks: dict[str, Any]


def ignored_by_extenders(cfg: KubeSchedulerConfiguration) -> list[str]:
    """The resource names extenders manage with ``ignoredByScheduler: true``, in order."""
    return [r.name for e in cfg.extenders for r in e.managed_resources if r.ignored_by_scheduler]


def apply_ignored_resources(cfg: KubeSchedulerConfiguration,
                            on_error: Callable[[int, KubeSchedulerProfile, str], None] | None = None) -> None:
    """Write the extenders' ignored resources into every profile's NodeResourcesFit args, in
    place, as upstream's scheduler.New (which replaces ``ignoredResources``). A profile without
    NodeResourcesFit args is ``on_error(index, profile, message)``, or a FrameworkError."""
    ignored = ignored_by_extenders(cfg)
    if not ignored:
        return
    from ..config.args import NodeResourcesFitArgs

    for i, prof in enumerate(cfg.profiles):
        pc = next((c for c in prof.plugin_config if c.name == "NodeResourcesFit"), None)
        if pc is None:
            if on_error is None:
                raise FrameworkError(NO_FIT_ARGS)
            on_error(i, prof, NO_FIT_ARGS)
            continue
        if pc.args is None:
            pc.args = NodeResourcesFitArgs()
        pc.args.ignored_resources = list(ignored)


def extender_field_error(index: int, ext: Any, exc: Exception) -> FieldError:
    """The problem of extender ``index`` that could not be built, at the field that caused it:
    ``extenders[i].urlPrefix`` for an address that is not an http(s) URL, ``extenders[i].tlsConfig``
    for TLS files that cannot be read, the extender itself otherwise."""
    path = FieldPath("extenders").index(index)
    text = str(exc) or type(exc).__name__
    if "urlPrefix" in text:
        where = path.child("urlPrefix")
    elif getattr(ext, "tls_config", None) is not None and isinstance(exc, OSError):
        where = path.child("tlsConfig")
    else:
        where = path
    return FieldError.build_failed(where, text)


def new_extenders(cfg: KubeSchedulerConfiguration,
                  on_error: Callable[[int, Any, Exception], None] | None = None) -> list:
    """The HTTP extenders of ``cfg.extenders``, in order. An extender that cannot be built (a bad
    URL, unreadable TLS files) is ``on_error(index, extender config, exception)``; without
    ``on_error``, every such extender is reported in one :class:`ConfigError` at its field (the
    constructor's own exception would name no field: a Scheduler built from a configuration with
    ``urlPrefix: text`` once failed with a bare ValueError)."""
    if not cfg.extenders:
        return []
    from ..extender import new_http_extenders

    errs: list[FieldError] = []
    if on_error is None:
        def on_error(i: int, ext: Any, exc: Exception) -> None:
            errs.append(extender_field_error(i, ext, exc))
    built: list = []
    for i, ext in enumerate(cfg.extenders):
        try:
            built += new_http_extenders([ext])
        except Exception as exc:  # noqa: BLE001 - reported at the extender's field
            on_error(i, ext, exc)
    if errs:
        raise ConfigError(errs)
    return built


def new_registry(extra: Mapping[str, Any] | None = None) -> Registry:
    """The in-tree registry with the out-of-tree factories ``extra`` merged in."""
    from ..plugins import in_tree_registry

    reg = in_tree_registry()
    if extra:
        reg.merge(extra)
    return reg


def new_map(cfg: KubeSchedulerConfiguration, registry: Registry, *, extenders: list,
            on_error: Callable[[int, KubeSchedulerProfile, Exception], None] | None = None,
            **framework_kwargs: Any) -> dict[str, Any]:
    """Upstream ``profile.NewMap``: one framework per profile, by scheduler name.
    ``framework_kwargs`` go to :func:`~fastsched.runtime.new_framework` (snapshot, client, clock,
    ...). A profile that fails to build raises, or is ``on_error(index, profile, exception)``."""
    frameworks: dict[str, Any] = {}
    for i, prof in enumerate(cfg.profiles):
        try:
            frameworks[prof.scheduler_name] = new_framework(
                registry, prof, parallelism=cfg.parallelism, extenders=extenders, **framework_kwargs)
        except Exception as exc:  # noqa: BLE001 - a plugin factory may fail any way
            if on_error is None:
                raise
            on_error(i, prof, exc)
    return frameworks


def build_profiles(cfg: KubeSchedulerConfiguration, registry: Mapping[str, Any] | None = None, *,
                   extenders: list | None = None, **framework_kwargs: Any) -> Profiles:
    """Everything a scheduler builds from a (defaulted, validated) configuration, the way
    upstream's scheduler.New does: extenders (``extenders`` replaces the configured ones with
    already built ones), the extenders' ignored resources applied to a copy of ``cfg``, the
    registry (``registry`` merged into the in-tree one), then one framework per profile."""
    original = cfg
    cfg = copy.deepcopy(cfg)  # the caller's configuration is never changed
    try:
        built_extenders = list(extenders) if extenders is not None else new_extenders(cfg)
        apply_ignored_resources(cfg)
        reg = new_registry(registry)
        frameworks = new_map(cfg, reg, extenders=built_extenders, **framework_kwargs)
    except FrameworkError as exc:
        # upstream's New stops at the first problem and names no field; build again with the
        # config check's hooks to say where each problem is (only on this failure path)
        errs = build_errors(original, registry=registry, **framework_kwargs)
        if not errs:
            raise
        raise ProfileBuildError(errs) from exc
    return Profiles(cfg, reg, built_extenders, frameworks)


def queueing_hints(profiles: Profiles) -> dict[str, dict[str, Any]]:
    """Upstream scheduler.New's ``buildQueueingHintMap`` per profile: each EnqueueExtensions
    plugin's ``events_to_register()``, by profile and plugin. A plugin that fails there fails the
    build as upstream's ``EventsToRegister`` error does (all of them joined), here a
    :class:`ProfileBuildError` naming the plugin's entry in the configuration, not the plugin's
    exception out of the constructor."""
    hints: dict[str, dict[str, Any]] = {}
    errs: list[FieldError] = []
    by_name = {p.scheduler_name: (i, p) for i, p in enumerate(profiles.config.profiles)}
    for name, fw in profiles.frameworks.items():
        hints[name] = {}
        for ext in fw.enqueue_extensions():
            try:
                hints[name][ext.name()] = ext.events_to_register()
            except Exception as exc:  # noqa: BLE001 - a plugin's own code: reported at its entry
                i, prof = by_name[name]
                path = FieldPath("profiles").index(i)
                where = _name_at(_enabled_at(prof, path, ext.name())) or path.child("plugins")
                errs.append(FieldError.build_failed(where, _in_profile(
                    prof, f"EventsToRegister of plugin {go_quote(ext.name())}: {type(exc).__name__}: {exc}")))
    if errs:
        raise ProfileBuildError(errs)
    return hints


def profile_or_error(frameworks: Mapping[str, Any], name: str) -> Any:
    """The framework of profile ``name``; an unknown name is a ConfigError naming the profiles
    there are (as ``fastsched explain --profile`` reports it)."""
    fw = frameworks.get(name)
    if fw is None:
        names = ", ".join(repr(n) for n in frameworks)
        raise ConfigError(message=f"no profile named {name!r} in the configuration (profiles: {names})")
    return fw


# ------------------------------------------------------------------------------------------------
# where a build failure is: the configuration check's part, used by build_profiles on failure too
# ------------------------------------------------------------------------------------------------
# the order in which the framework walks extension points (its errors name the first failure)
_FRAMEWORK_ORDER = ("pre_filter", "filter", "post_filter", "reserve", "pre_score", "score", "pre_bind", "bind",
                    "post_bind", "permit", "pre_enqueue", "queue_sort", "placement_generate", "placement_score",
                    "pod_group_post_filter", "multi_point")
_QUOTED = r'"((?:[^"\\]|\\.)*)"'


def build_errors(cfg: KubeSchedulerConfiguration, *, registry: Mapping[str, Any] | None = None,
                 **framework_kwargs: Any) -> list[FieldError]:
    """Every problem met while building ``cfg`` (a defaulted, validated configuration) the way
    :class:`~fastsched.scheduler.Scheduler` builds it (the steps of
    :func:`fastsched.scheduler.profile.build_profiles`), each at the field that caused it.
    ``framework_kwargs`` go to every framework as build_profiles passes them (the feature gates
    decide which plugins a profile has)."""
    cfg = copy.deepcopy(cfg)
    errs: list[FieldError] = []

    def extender_failed(i: int, ext: Any, exc: Exception) -> None:
        errs.append(extender_field_error(i, ext, exc))

    def no_fit_args(i: int, prof: KubeSchedulerProfile, message: str) -> None:
        errs.append(FieldError.build_failed(FieldPath("profiles").index(i).child("pluginConfig"),
                                            _in_profile(prof, message)))

    def profile_failed(i: int, prof: KubeSchedulerProfile, exc: Exception) -> None:
        path = FieldPath("profiles").index(i)
        if isinstance(exc, FrameworkError):
            errs.extend(_framework_errors(path, prof, str(exc)))
        else:  # a plugin factory failing outside the framework's wrapping
            errs.append(FieldError.build_failed(path, _in_profile(prof, f"{type(exc).__name__}: {exc}")))

    extenders = new_extenders(cfg, on_error=extender_failed)
    apply_ignored_resources(cfg, on_error=no_fit_args)
    new_map(cfg, new_registry(registry), extenders=extenders, on_error=profile_failed,
                     **framework_kwargs)
    return errs


def _in_profile(profile: KubeSchedulerProfile, message: str) -> str:
    name = profile.scheduler_name or ""
    if f"scheduler name {go_quote(name)}" in message:
        return message
    return f"profile {go_quote(name)}: {message}"


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _name_at(entry: FieldPath | None) -> FieldPath | None:
    if entry is None or str(entry).endswith(".enabled"):
        return entry
    return entry.child("name")


def _enabled_at(profile: KubeSchedulerProfile, path: FieldPath, name: str,
                points: Iterable[str] = _FRAMEWORK_ORDER) -> FieldPath | None:
    """The path of the first ``enabled`` entry naming plugin ``name`` (None when there is none)."""
    plugins = profile.plugins
    if plugins is None:
        return None
    for point in points:
        for j, plugin in enumerate(getattr(plugins, point).enabled):
            if plugin.name == name:
                enabled = path.child("plugins", EXTENSION_POINT_JSON[point], "enabled")
                # multiPoint holds the default plugins ahead of the file's own: an index there
                # would not be the file's, so the list is named (the message names the plugin)
                return enabled if point == "multi_point" else enabled.index(j)
    return None


def _point_of_interface(iface_name: str) -> str | None:
    from ..framework.interface import EXTENSION_POINT_INTERFACES

    for point, (_, name) in EXTENSION_POINT_INTERFACES.items():
        if name == iface_name:
            return point
    return None


def _framework_errors(path: FieldPath, profile: KubeSchedulerProfile, message: str) -> list[FieldError]:
    """A FrameworkError of ``profile`` as field errors at the field that caused it."""
    detail = _in_profile(profile, message)
    plugins_path = path.child("plugins")

    m = re.match(r"initializing plugin " + _QUOTED + r": (.*)\Z", message, re.DOTALL)
    if m:
        name = _unquote(m.group(1))
        for j, pc in enumerate(profile.plugin_config):
            if pc.name != name:
                continue
            args_path = path.child("pluginConfig").index(j).child("args")
            validate = getattr(pc.args, "validate", None)
            found = validate(args_path) if callable(validate) else []
            if found:  # the plugin's own args validation (NewFit's for NodeResourcesFit): exact fields
                prefix = _in_profile(profile, f"initializing plugin {go_quote(name)}")
                return [FieldError.build_failed(e.path, f"{prefix}: {e.body()}") for e in found]
            return [FieldError.build_failed(args_path, detail)]
        return [FieldError.build_failed(_name_at(_enabled_at(profile, path, name)) or plugins_path, detail)]

    m = re.match(r"(\w+) " + _QUOTED + r" does not exist\Z", message)
    if m:
        point = _point_of_interface(m.group(1))
        name = _unquote(m.group(2))
        where = (_enabled_at(profile, path, name, [point]) if point else None) or _enabled_at(profile, path, name)
        return [FieldError.build_failed(_name_at(where) or plugins_path, detail)]

    m = re.match(r"plugin " + _QUOTED + r" (?:does not extend (\w+) plugin|already registered as " + _QUOTED + r")\Z",
                 message)
    if m:
        name = _unquote(m.group(1))
        if m.group(2):
            point = _point_of_interface(m.group(2))
            where = _enabled_at(profile, path, name, [point]) if point else None
        else:
            where = _enabled_at(profile, path, name, ["multi_point"])
        where = where or _enabled_at(profile, path, name)
        return [FieldError.build_failed(_name_at(where) or plugins_path, detail)]

    m = re.match(r"(placement )?score plugin " + _QUOTED + r" is not configured with weight\Z", message)
    if m:
        point = "placement_score" if m.group(1) else "score"
        name = _unquote(m.group(2))
        where = _enabled_at(profile, path, name, [point, "multi_point"])
        if where is None:
            where = plugins_path.child(EXTENSION_POINT_JSON[point])
        elif not str(where).endswith(".enabled"):
            where = where.child("weight")
        return [FieldError.build_failed(where, detail)]

    for needle, point in (("queue sort plugin", "queue_sort"), ("bind plugin", "bind"),
                          ("placement generate plugin", "placement_generate"),
                          ("placement score plugins: total score", "placement_score"),
                          ("total score of Score plugins", "score")):
        if needle in message:
            return [FieldError.build_failed(plugins_path.child(EXTENSION_POINT_JSON[point]), detail)]
    if message.startswith("repeated config for plugin"):
        return [FieldError.build_failed(path.child("pluginConfig"), detail)]
    return [FieldError.build_failed(path, detail)]

