"""Shared helpers for the config tests."""

from __future__ import annotations

import pytest

from fastsched.config import API_VERSION, KIND, ConfigError, load_config


def doc(**fields):
    """A v1 KubeSchedulerConfiguration document (a dict) with ``fields`` added."""
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def problems(source, **kwargs) -> list[str]:
    """The messages of the ConfigError that loading ``source`` raises."""
    with pytest.raises(ConfigError) as info:
        load_config(source, **kwargs)
    return [str(e) for e in info.value.errors]
