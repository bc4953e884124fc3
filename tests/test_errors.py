"""One error family: every public error is a FastschedError; path-aware messages share one shape."""
from __future__ import annotations

import pickle

import pytest

from fastsched.api import ManifestError, QuantityError
from fastsched.api.validation import ValidationError
from fastsched.cli import CLIError
from fastsched.config import ConfigError, FieldError
from fastsched.errors import FastschedError, LocatedError, located
from fastsched.sim.generators import SpecError
from fastsched.sim.scenario import ScenarioError


def _lead_owned(module: str, name: str):
    """Errors defined in files another change owns: expected in the family, marked until they join."""
    import importlib

    cls = getattr(importlib.import_module(module), name)
    marks = () if issubclass(cls, FastschedError) else pytest.mark.xfail(
        reason=f"{module}.{name} does not derive from FastschedError yet", strict=True)
    return pytest.param(cls, marks=marks, id=name)


PUBLIC_ERRORS = [
    ManifestError, QuantityError, ValidationError, ConfigError, SpecError, ScenarioError, CLIError,
    _lead_owned("fastsched.runtime", "FrameworkError"),
    _lead_owned("fastsched.runtime", "RegistryError"),
    _lead_owned("fastsched.extender", "ExtenderError"),
]


@pytest.mark.parametrize("cls", PUBLIC_ERRORS)
def test_every_public_error_is_a_fastsched_error(cls):
    assert issubclass(cls, FastschedError)


@pytest.mark.parametrize("cls", [ManifestError, QuantityError, ValidationError, ConfigError, SpecError])
def test_errors_that_were_value_errors_still_are(cls):
    assert issubclass(cls, ValueError)


def test_located_message_shape():
    assert located("bad", "spec.x", "pod.yaml") == "pod.yaml: spec.x: bad"
    assert located("bad", "spec.x") == "spec.x: bad"
    assert located("bad", None, "pod.yaml") == "pod.yaml: bad"
    assert located("bad") == "bad"


def test_manifest_scenario_and_config_errors_share_the_shape():
    m = ManifestError("invalid quantity", "spec.containers[0].resources.requests.cpu", "Pod default/web")
    assert str(m) == "Pod default/web: spec.containers[0].resources.requests.cpu: invalid quantity"
    assert str(m.nested_under("items[0]").with_source("cluster.yaml")) == \
        "cluster.yaml: Pod default/web: items[0].spec.containers[0].resources.requests.cpu: invalid quantity"
    s = SpecError("arrivals[1].rate", "must be > 0, got 0")
    assert isinstance(s, LocatedError) and s.problem == s.reason == "must be > 0, got 0"
    assert str(s) == "arrivals[1].rate: must be > 0, got 0"
    assert str(s.with_source("scenario.yaml")) == "scenario.yaml: arrivals[1].rate: must be > 0, got 0"
    assert str(SpecError("", "whole document")) == "whole document"
    c = ConfigError([FieldError.invalid("parallelism", -1, "should be an integer value greater than zero")])
    assert str(c) == "parallelism: Invalid value: -1: should be an integer value greater than zero"
    assert c.with_source("cfg.yaml").lines() == [
        "cfg.yaml: parallelism: Invalid value: -1: should be an integer value greater than zero"]
    assert str(FieldError.build_failed("profiles[0].plugins.bind", "no bind plugin")) == \
        "profiles[0].plugins.bind: no bind plugin"


def test_errors_pickle():
    for err in (ManifestError("r", "p", "s"), QuantityError("r", "p"), SpecError("a.b", "bad", "f.yaml"),
                ConfigError([FieldError.required("kind")], source="cfg.yaml")):
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is type(err) and str(again) == str(err)
