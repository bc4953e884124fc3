"""Checking that a configuration can actually be built, not only that it validates.

Upstream's validation (:mod:`fastsched.config.validation`) leaves several problems to the moment a
profile is built into a framework: a plugin name no registry knows, a profile left without a bind
or queue-sort plugin, a Score plugin without weight, NodeResourcesFit's args (validated by
``NewFit``), an extender whose ``urlPrefix`` is not a URL. :func:`build_errors` builds everything
the :class:`~fastsched.scheduler.Scheduler` builds, by the steps of
:func:`fastsched.scheduler.profile.build_profiles` (the extenders, their ignored resources, then
each profile's framework from the in-tree registry and the caller's), and reports each failure at
the field that caused it, naming the profile::

    profiles[0].plugins.filter.enabled[0].name: profile "default-scheduler": FilterPlugin "Typo" does not exist

:func:`check_config` loads, validates and build-checks in one call (``fastsched config validate``
and every command reading ``--config`` use it): what it accepts, ``Scheduler`` accepts. It lives
beside the profile builder, in the scheduler package, not in :mod:`fastsched.config`: building
needs the plugins, which sit above the configuration's layer.
"""
from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..config.errors import ConfigError

from ..util.field import FieldError, FieldPath, go_quote
from ..config.types import KubeSchedulerConfiguration, KubeSchedulerProfile
from ..config.validation import EXTENSION_POINT_JSON

__all__ = ["build_errors", "check_config"]

# the order in which the framework walks extension points (its errors name the first failure)
_FRAMEWORK_ORDER = ("pre_filter", "filter", "post_filter", "reserve", "pre_score", "score", "pre_bind", "bind",
                    "post_bind", "permit", "pre_enqueue", "queue_sort", "placement_generate", "placement_score",
                    "pod_group_post_filter", "multi_point")
_QUOTED = r'"((?:[^"\\]|\\.)*)"'


def check_config(source: Any = None, *, registry: Mapping[str, Any] | None = None,
                 feature_gates: Any = None) -> KubeSchedulerConfiguration:
    """Load ``source`` (what :func:`~fastsched.config.load_config` takes), validate it and build
    it as a Scheduler would; raise one :class:`ConfigError` listing every problem found.

    ``registry`` holds out-of-tree plugin factories (name -> factory), as ``Scheduler`` takes them;
    ``feature_gates`` the gates the Scheduler will run with (the default plugins depend on them).
    Build problems are only looked for once validation passes.
    """
    from ..config.load import load_config

    cfg = load_config(source, registry_names=list(registry or ()), feature_gates=feature_gates)
    errs = build_errors(cfg, registry=registry)
    if errs:
        raise ConfigError(errs)
    try:  # the final word: the Scheduler itself (anything the checks above did not foresee)
        from .scheduler import Scheduler

        Scheduler(cfg, registry=registry or None, feature_gates=feature_gates)
    except Exception as exc:  # noqa: BLE001 - reported as a problem of the configuration
        raise ConfigError(message=f"cannot build a scheduler from this configuration: "
                                  f"{type(exc).__name__}: {exc}") from None
    return cfg


def build_errors(cfg: KubeSchedulerConfiguration, *, registry: Mapping[str, Any] | None = None,
                 **framework_kwargs: Any) -> list[FieldError]:
    """Every problem met while building ``cfg`` (a defaulted, validated configuration) the way
    :class:`~fastsched.scheduler.Scheduler` builds it (the steps of
    :func:`fastsched.scheduler.profile.build_profiles`), each at the field that caused it.
    ``framework_kwargs`` go to every framework as build_profiles passes them (the feature gates
    decide which plugins a profile has)."""
    from ..runtime import FrameworkError
    from . import profile as profiles

    cfg = copy.deepcopy(cfg)
    errs: list[FieldError] = []

    def extender_failed(i: int, ext: Any, exc: Exception) -> None:
        errs.append(profiles.extender_field_error(i, ext, exc))

    def no_fit_args(i: int, prof: KubeSchedulerProfile, message: str) -> None:
        errs.append(FieldError.build_failed(FieldPath("profiles").index(i).child("pluginConfig"),
                                            _in_profile(prof, message)))

    def profile_failed(i: int, prof: KubeSchedulerProfile, exc: Exception) -> None:
        path = FieldPath("profiles").index(i)
        if isinstance(exc, FrameworkError):
            errs.extend(_framework_errors(path, prof, str(exc)))
        else:  # a plugin factory failing outside the framework's wrapping
            errs.append(FieldError.build_failed(path, _in_profile(prof, f"{type(exc).__name__}: {exc}")))

    extenders = profiles.new_extenders(cfg, on_error=extender_failed)
    profiles.apply_ignored_resources(cfg, on_error=no_fit_args)
    profiles.new_map(cfg, profiles.new_registry(registry), extenders=extenders, on_error=profile_failed,
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

