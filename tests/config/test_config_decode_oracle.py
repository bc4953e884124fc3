"""Decoding errors of a KubeSchedulerConfiguration against upstream's own decoder, live.

The oracle (``oracle/``, Go) decodes a scenario's configuration as kube-scheduler loads its file
(``scheme.Codecs.UniversalDecoder().Decode``) and answers its error. Every single-field mutant of
the mutation fuzz's full configuration (test_config_mutation_fuzz.py; a deterministic sample by
default, ``FASTSCHED_FUZZ_MUTANTS=all`` for the ~2,900) and a few hand-picked documents are asked:
where upstream refuses the document while decoding it (a type error, a bad duration, plugin args of
the wrong kind), its message must be one of fastsched's decoding errors (upstream stops at the first,
fastsched lists them all); where upstream decodes it, fastsched must report no decoding error.
Skipped where Go is not on PATH, as tests/oracle/test_live.py.
"""
from __future__ import annotations

import math
import os
import shutil
from typing import Any

import pytest

from fastsched.config import ConfigError, load_config
from fastsched.util.field import ErrorType
from tests.api.test_mutation_fuzz import sample
from tests.config.helpers import doc
from tests.config.test_config_mutation_fuzz import _mutate, all_mutants, base_config
from tests.oracle.test_gangs import live_oracle as _live_oracle

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="the oracle needs Go (`go` not on PATH)")

#: upstream's messages for a document it refuses while decoding it
_DECODING = ("json:", "decoding ", "time:", "couldn't get", "unexpected GroupVersion", "no kind", "Object '")

HAND_PICKED: list[dict[str, Any]] = [
    doc(parallelism="16"),
    doc(parallelism=16.5),
    doc(percentageOfNodesToScore=2**31),
    doc(kind=5),
    doc(profiles=[None, {"schedulerName": "b"}]),
    doc(leaderElection={"leaseDuration": None}),
    doc(leaderElection={"retryPeriod": "\u00fc\n"}),
    doc(extenders=[{"urlPrefix": "http://x", "httpTimeout": None}]),
    doc(extenders=[{"urlPrefix": "http://x", "tlsConfig": {"caData": 5}}]),
    doc(profiles=[{"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": None}}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "DefaultPreemption", "args": [1]}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"kind": "InterPodAffinityArgs"}}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"apiVersion": "x/"}}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"apiVersion": "a/b/c"}}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"apiVersion": "v1"}}]}]),
    doc(profiles=[{"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultConstraints": [{"whenUnsatisfiable": 1, "maxSkew": "x", "labelSelector": 3}]}}]}]),
]


@pytest.fixture(scope="module")
def live_oracle():
    # the oracle's build and start as the oracle tests make them (no feature gates: decoding
    # does not read them)
    yield from _live_oracle("")


def _disagreement(live_oracle, config: dict[str, Any]) -> str | None:
    answer = live_oracle.ask({"id": "config", "config": config, "nodes": [], "pods": [], "objects": [],
                              "incoming": []}, [])
    go = (answer.get("error") or "").removeprefix("config: ")
    go = go if go.startswith(_DECODING) else ""
    try:
        load_config(config, validate=False)
        mine: list[str] = []
    except ConfigError as error:
        mine = [e.detail for e in error.errors if e.type is ErrorType.DECODING]
    if (go in mine) if go else not mine:
        return None
    return f"upstream: {go or 'decoded'}; fastsched: {mine or 'decoded'}"


def test_hand_picked_documents_are_refused_as_upstream_refuses_them(live_oracle):
    bad = [f"{config}: {why}" for config in HAND_PICKED if (why := _disagreement(live_oracle, config))]
    assert not bad, "\n".join(bad)


def test_mutants_are_refused_as_upstream_refuses_them(live_oracle):
    setting = os.environ.get("FASTSCHED_FUZZ_MUTANTS", "400")
    base = base_config()
    mutants = [m for m in all_mutants() if not (isinstance(m[2], float) and not math.isfinite(m[2]))]  # (no JSON)
    bad = []
    for path, label, value in sample(mutants, None if setting == "all" else int(setting)):
        why = _disagreement(live_oracle, _mutate(base, path, value))
        if why:
            bad.append(f"{path} = {label}: {why}")
    assert not bad, f"{len(bad)} mutants:\n" + "\n".join(bad[:20])
