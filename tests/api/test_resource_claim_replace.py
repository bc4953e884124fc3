"""``ResourceClaim.replace`` (a field copy) makes the object ``dataclasses.replace`` makes: every
stored field, the non-compared ones (manifest, admitted, decoded_under) included, for claims read
from manifests and built in code and for changes of each kind (identity, metadata, status)."""
from __future__ import annotations

import dataclasses

import pytest

from fastsched.api.objects import FrozenDict, KubeObject
from fastsched.api.resource import ResourceClaim, claim_with_status, parse_resource_claim

MANIFEST = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "ns", "uid": "u-1", "labels": {"a": "b"},
                         "annotations": {"x": "y"}, "generateName": "c-"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 2}}],
                                 "constraints": [{"matchAttribute": "gpu.example.com/numa"}]}}}


def _claims() -> list[ResourceClaim]:
    read = ResourceClaim.from_manifest(MANIFEST)
    read.decoded_under = (frozenset(), True)  # as the loader leaves it
    unnamed = parse_resource_claim({"metadata": {"generateName": "pod-extended-resources-", "namespace": "ns"},
                                    "spec": MANIFEST["spec"]})
    built = ResourceClaim(name="b", namespace="ns", labels={"k": "v"})
    built.admitted = True
    return [read, unnamed, built]


def _reference(claim: ResourceClaim, changes: dict) -> ResourceClaim:
    # KubeObject.replace: dataclasses.replace, then decoded_under kept while the manifest is
    return KubeObject.replace(claim, **changes)


def _stored(obj: object) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


CHANGES = [
    {},
    {"name": "c-x1y2z"},
    {"name": "c-x1y2z", "uid": "", "manifest": {"metadata": {"name": "c-x1y2z"}}},
    {"uid": ""},
    {"name": "", "uid": ""},
    {"labels": {"l": "1"}, "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}},
    {"allocation": {"devices": {"results": []}}, "reserved_for": ({"resource": "pods", "name": "p", "uid": "1"},)},
    {"finalizers": ("resource.kubernetes.io/delete-protection",), "manifest": {}},
    {"namespace": "other", "uid": ""},
]


@pytest.mark.parametrize("changes", CHANGES)
def test_replace_makes_what_dataclasses_replace_makes(changes):
    for claim in _claims():
        before = _stored(claim)
        got = claim.replace(**changes)
        want = _reference(claim, changes)
        assert type(got) is ResourceClaim
        assert _stored(got) == _stored(want), (claim.name, changes)
        assert type(got.labels) is FrozenDict and type(got.annotations) is FrozenDict
        assert got is not claim and _stored(claim) == before  # the original untouched


def test_replace_refuses_what_dataclasses_replace_refuses():
    claim = _claims()[0]
    for changes in ({"admitted": True}, {"no_such_field": 1}):
        with pytest.raises((TypeError, ValueError)) as got:
            claim.replace(**changes)
        with pytest.raises(type(got.value)):
            _reference(claim, changes)


def test_status_writes_keep_the_object_dataclasses_replace_keeps():
    claim = _claims()[0]
    allocation = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "x"}]}}
    new = claim_with_status(claim, allocation=allocation, reserved_for=[{"resource": "pods", "name": "p", "uid": "1"}])
    assert new.allocation == allocation and new.admitted and new.decoded_under is None
    assert new.manifest["status"]["allocation"] == allocation and new.requests == claim.requests
