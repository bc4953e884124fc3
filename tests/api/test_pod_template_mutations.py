"""Interned admission (pods stamped from a template seen before, fastsched.api.templates) against
plain per-pod decoding, on real manifests mutated one field at a time.

Bases: the pods of ``examples/cluster.yaml`` (a ``kubectl get -o yaml`` dump: per-pod status,
resourceVersion, owner references), upstream's SchedulingBasic pod template, a pod named by
``generateName`` and one with affinity, tolerations and a node selector. Each mutant changes one
field of its base (every leaf and every object/array node: removed, replaced by a value of each
JSON type, changed to another value of its type) or adds one (an unknown field, a case-folded
name). The base is loaded first (so that it is the template), then the mutant; both with the
template cache and with every pod on the full path. The mutant must decode to the same pod, field
for field, with the same warnings, or fail with the same error, and schedule the same way.

The check is itself checked: a planted mutant of the key (labels left out of it, so pods that
differ only in labels would share a template) must be caught.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import random
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.api import load as load_module
from fastsched.api import load_objects
from fastsched.api.templates import PodTemplates
from fastsched.errors import FastschedError
from fastsched.sim.workloads import template_manifest
from fastsched.testing import make_node

ROOT = Path(__file__).resolve().parents[2]
#: mutants checked per base (a seeded sample; every mutant of the small bases)
PER_BASE = 400
_BAD_VALUES: tuple[Any, ...] = (None, 7, -1, 1.5, True, "x", "", "Ünï", [], {}, [1], {"a": 1})


class _FullPath(PodTemplates):
    """The full path for every pod: per-pod decoding and validation."""

    def key(self, document):
        return None


class _LabelsLeftOut(PodTemplates):
    """A planted mutant: labels left out of the template key."""

    def key(self, document):
        meta = document.get("metadata") if type(document) is dict else None
        if type(meta) is dict and "labels" in meta:
            document = {**document, "metadata": {k: v for k, v in meta.items() if k != "labels"}}
        return super().key(document)


def _dump_pods() -> list[dict]:
    return copy.deepcopy(_read_dump_pods())


@functools.lru_cache(maxsize=1)
def _read_dump_pods() -> list[dict]:
    pods = []
    for doc in yaml.safe_load_all((ROOT / "examples" / "cluster.yaml").read_text()):
        if not doc:
            continue
        for item in doc.get("items", [doc]) if doc.get("kind", "").endswith("List") else [doc]:
            if item.get("kind") == "Pod":
                pods.append(item)
    return pods


def _bases() -> list[tuple[str, dict]]:
    bases = [(f"dump-{p['metadata']['name']}", p) for p in _dump_pods()[:6]]
    basic = template_manifest("pod-default", "pod-0", "namespace-1")
    bases.append(("scheduler-perf-basic", basic))
    generated = copy.deepcopy(basic)
    del generated["metadata"]["name"]
    bases.append(("generate-name", generated))
    bases.append(("affinity", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
                     "annotations": {"team": "a"}, "resourceVersion": "12", "generation": 1},
        "spec": {"containers": [{"name": "c", "image": "nginx",
                                 "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
                 "nodeSelector": {"zone": "a"},
                 "tolerations": [{"key": "gpu", "operator": "Exists"}],
                 "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"tier": "front"}},
                      "matchLabelKeys": ["app"]}]}}},
        "status": {"phase": "Pending"},
    }))
    return bases


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _get(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _mutants(base: dict) -> Iterator[tuple[str, dict]]:
    """(description, manifest) of every one-field mutant of ``base``."""
    for path in _paths(base):
        if not path:
            continue
        where = ".".join(map(str, path))
        parent_path, last = path[:-1], path[-1]
        value = _get(base, path)
        replacements = list(_BAD_VALUES)
        if isinstance(value, str):
            replacements += [value + "x", value.upper()]
        elif isinstance(value, bool):
            replacements.append(not value)
        elif isinstance(value, int):
            replacements += [value + 1, str(value)]
        for new in replacements:
            if type(new) is type(value) and new == value:
                continue
            m = copy.deepcopy(base)
            _get(m, parent_path)[last] = copy.deepcopy(new)
            yield f"{where} = {new!r}", m
        m = copy.deepcopy(base)
        parent = _get(m, parent_path)
        if isinstance(parent, dict):
            del parent[last]
            yield f"{where} removed", m
            if isinstance(last, str) and last[:1].islower():
                m = copy.deepcopy(base)
                parent = _get(m, parent_path)
                parent[last[0].upper() + last[1:]] = parent.pop(last)
                yield f"{where} case-folded", m
        else:
            parent.pop(last)
            yield f"{where} removed", m
        if isinstance(value, dict):
            m = copy.deepcopy(base)
            _get(m, path)["zzUnknown"] = 1
            yield f"{where}.zzUnknown added", m


def _fields(obj: Any) -> dict:
    out = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.compare}
    out.update(uid=obj.uid, manifest=obj.manifest)
    if hasattr(obj, "requests"):
        out.update(requests=dict(obj.requests), non_zero_requests=dict(obj.non_zero_requests),
                   scoring_requests=dict(obj.scoring_requests))
    return out


def _renamed(m: dict, suffix: str) -> dict:
    m = copy.deepcopy(m)
    meta = m.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        meta["name"] += suffix
        meta.pop("uid", None)
    return m


def _load_outcome(cache: PodTemplates, base: dict, mutant: dict) -> Any:
    """What loading the base (twice: the template, then a pod stamped from it) and the mutant
    gives: the decoded pods and the warnings, or the error."""
    saved = load_module._POD_TEMPLATES
    load_module._POD_TEMPLATES = cache
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                objects = load_objects([copy.deepcopy(base), _renamed(base, "-b"), copy.deepcopy(mutant)])
                outcome: Any = [_fields(o) for o in objects]
            except FastschedError as e:
                outcome = (type(e).__name__, str(e))
        return outcome, [str(w.message) for w in caught]
    finally:
        load_module._POD_TEMPLATES = saved


def _schedule_outcome(cache: PodTemplates, base: dict, mutant: dict) -> Any:
    saved = load_module._POD_TEMPLATES
    load_module._POD_TEMPLATES = cache
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = Scheduler(seed=5)
            s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi", labels={"zone": "a"}) for i in range(3)]
                        + [make_node("gke-prod-pool-1-ngq2cd9w-fpxc", cpu="8", memory="16Gi")])
            try:
                s.add_pods([_unbound(base), _unbound(_renamed(base, "-b")), _unbound(mutant)])
            except FastschedError as e:
                return ("add", type(e).__name__, str(e))
            return [(r.pod.key, r.status, r.node_name, r.message) for r in s.run()]
    finally:
        load_module._POD_TEMPLATES = saved


def _unbound(m: dict) -> dict:
    """``m`` to be scheduled (its nodeName and status dropped, when they are where a dump has them)."""
    m = copy.deepcopy(m)
    if isinstance(m.get("spec"), dict):
        m["spec"].pop("nodeName", None)
    m.pop("status", None)
    return m


def _sample(base_name: str, base: dict) -> list[tuple[str, dict]]:
    mutants = list(_mutants(base))
    if len(mutants) > PER_BASE:
        mutants = random.Random(f"{base_name}-29").sample(mutants, PER_BASE)
    return mutants


def _disagreements(cache_type: type, bases: list[tuple[str, dict]]) -> list[str]:
    found = []
    for base_name, base in bases:
        for what, mutant in _sample(base_name, base):
            if _load_outcome(cache_type(), base, mutant) != _load_outcome(_FullPath(), base, mutant):
                found.append(f"{base_name}: {what}")
    return found


@pytest.mark.parametrize("base_name,base", _bases(), ids=[name for name, _ in _bases()])
def test_interned_admission_decodes_every_mutant_as_the_full_path(base_name, base):
    interned_hits = 0
    for what, mutant in _sample(base_name, base):
        cache = PodTemplates()
        interned = _load_outcome(cache, base, mutant)
        full = _load_outcome(_FullPath(), base, mutant)
        assert interned == full, f"{base_name}: {what}"
        interned_hits += len(cache._templates) > 0
    assert interned_hits  # the template cache was in use


def test_a_stamped_dump_pod_takes_its_own_status_and_resource_version():
    """Two pods of one Deployment from a dump differ in name, uid, resourceVersion and status: the
    second is stamped from the first (its spec objects are the first's), with its own status."""
    base = _dump_pods()[0]
    other = copy.deepcopy(base)
    other["metadata"].update(name=base["metadata"]["name"] + "-b", uid="0316909e-3bbb-49ea-a894-000000000002",
                             resourceVersion="999")
    other["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}
    saved = load_module._POD_TEMPLATES
    load_module._POD_TEMPLATES = PodTemplates()
    try:
        first, second = load_objects([copy.deepcopy(base), other])
    finally:
        load_module._POD_TEMPLATES = saved
    assert second.containers is first.containers and second.tolerations is first.tolerations
    assert second.phase == "Pending" and first.phase == "Running"
    assert second.conditions == ({"type": "PodScheduled", "status": "False"},) and second.start_time is None
    assert _load_outcome(PodTemplates(), base, other) == _load_outcome(_FullPath(), base, other)


_SCHEDULED_BASES = [b for b in _bases() if b[0] in ("affinity", "generate-name")] + _bases()[:1]


@pytest.mark.parametrize("base_name,base", _SCHEDULED_BASES, ids=[name for name, _ in _SCHEDULED_BASES])
def test_interned_admission_schedules_mutants_as_the_full_path(base_name, base):
    for what, mutant in _sample(base_name, base)[:60]:
        assert _schedule_outcome(PodTemplates(), base, mutant) == _schedule_outcome(_FullPath(), base, mutant), \
            f"{base_name}: {what}"


def test_the_check_catches_a_field_left_out_of_the_key():
    """The planted mutant (labels left out of the template key) disagrees with the full path."""
    bases = [b for b in _bases() if b[0] == "affinity"]
    assert _disagreements(_LabelsLeftOut, bases)
    assert not _disagreements(PodTemplates, bases)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=6), inner, max_size=2),
                     max_leaves=6)
_STATUS = st.none() | _JSON | st.fixed_dictionaries({}, optional={
    "phase": st.sampled_from(["Pending", "Running", "Succeeded", 3]),
    "nominatedNodeName": st.sampled_from(["n1", "", 1]),
    "startTime": st.sampled_from(["2026-11-02T09:14:07Z", "yesterday", 5]),
    "conditions": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["Ready", "PodScheduled"]),
                                                  "status": st.sampled_from(["True", "False", True])}), max_size=2),
    "podIP": st.sampled_from(["10.0.0.1", 7]),
    "zzUnknown": st.just(1),
})


@settings(max_examples=120, deadline=None)
@given(status=_STATUS, resource_version=st.none() | _JSON, generation=st.none() | _JSON,
       managed_fields=st.none() | _JSON, created=st.none() | _JSON)
def test_any_per_pod_fields_agree_with_the_full_path(status, resource_version, generation, managed_fields, created):
    """Any values of the per-pod fields the template cache reads per pod (status, resourceVersion,
    generation, managedFields, creationTimestamp): the stamped pod is the full path's, or both fail
    alike."""
    base = _dump_pods()[0]
    mutant = _renamed(base, "-h")
    for key, value in (("resourceVersion", resource_version), ("generation", generation),
                       ("managedFields", managed_fields), ("creationTimestamp", created)):
        if value is None:
            mutant["metadata"].pop(key, None)
        else:
            mutant["metadata"][key] = value
    if status is None:
        mutant.pop("status", None)
    else:
        mutant["status"] = status
    assert _load_outcome(PodTemplates(), base, mutant) == _load_outcome(_FullPath(), base, mutant)
