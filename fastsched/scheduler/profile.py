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
:func:`new_registry`, :func:`new_map`), with an ``on_error`` hook, for the configuration check,
which reports every problem at its field instead of stopping at the first.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..config.errors import ConfigError
from ..config.types import KubeSchedulerConfiguration, KubeSchedulerProfile
from ..runtime import FrameworkError, Registry, new_framework
from ..util.field import FieldError, FieldPath

__all__ = ["ProfileBuildError", "Profiles", "apply_ignored_resources", "build_profiles", "extender_field_error", "ignored_by_extenders",
           "new_extenders", "new_map", "new_registry", "profile_or_error"]

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
        from .config_check import build_errors

        errs = build_errors(original, registry=registry, **framework_kwargs)
        if not errs:
            raise
        raise ProfileBuildError(errs) from exc
    return Profiles(cfg, reg, built_extenders, frameworks)


def profile_or_error(frameworks: Mapping[str, Any], name: str) -> Any:
    """The framework of profile ``name``; an unknown name is a ConfigError naming the profiles
    there are (as ``fastsched explain --profile`` reports it)."""
    fw = frameworks.get(name)
    if fw is None:
        names = ", ".join(repr(n) for n in frameworks)
        raise ConfigError(message=f"no profile named {name!r} in the configuration (profiles: {names})")
    return fw
