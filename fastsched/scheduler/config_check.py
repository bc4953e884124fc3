"""Checking that a configuration can actually be built, not only that it validates.

Upstream's validation (:mod:`fastsched.config.validation`) leaves several problems to the moment a
profile is built into a framework: a plugin name no registry knows, a profile left without a bind
or queue-sort plugin, a Score plugin without weight, NodeResourcesFit's args (validated by
``NewFit``), an extender whose ``urlPrefix`` is not a URL. :func:`build_errors` (it lives in
:mod:`fastsched.scheduler.profile`, which reports a Scheduler's build failures with it too) builds
everything the :class:`~fastsched.scheduler.Scheduler` builds, by the steps of
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

from collections.abc import Mapping
from typing import Any

from ..config.errors import ConfigError
from ..config.types import KubeSchedulerConfiguration
from .profile import build_errors

__all__ = ["build_errors", "check_config"]


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


