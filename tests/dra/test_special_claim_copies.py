"""The DRA extended-resource claims built as field copies (issue 27, extres9) are the objects
``ResourceClaim(...)`` and ``replace`` build: every stored field, the non-compared ones (manifest,
admitted, decoded_under) included, on seeded random inputs; and a copy shares nothing mutable
with the kept claim it was copied from."""
from __future__ import annotations

import dataclasses
import random

import pytest

from fastsched.api.objects import FrozenDict, KubeObject, OwnerReference, Pod
from fastsched.api.resource import FINALIZER, ResourceClaim, claim_spec_fields, claim_with_status, parse_resource_claim
from fastsched.dra.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION, SPECIAL_CLAIM_IN_MEM_NAME
from fastsched.plugins import dynamicresources as dr


def _stored(obj: object) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _spec(rng: random.Random) -> dict:
    return {"devices": {"requests": [
        {"name": f"container-{i}-request-{j}", "exactly": {"deviceClassName": f"class-{rng.randrange(5)}",
                                                          "allocationMode": "ExactCount", "count": rng.randint(1, 3)}}
        for i in range(rng.randint(1, 2)) for j in range(rng.randint(1, 2))]}}


def _pod(rng: random.Random) -> Pod:
    name = f"pod-{rng.randrange(10**6)}"
    return Pod(name=name, namespace=rng.choice(["default", "test", "ns-a"]), uid=f"uid-{rng.randrange(10**9)}")


@pytest.mark.parametrize("seed", range(20))
def test_in_memory_special_claim_is_what_init_builds(seed):
    rng = random.Random(seed)
    pod = _pod(rng)
    got = dr._in_memory_special_claim(pod)
    want = ResourceClaim(name=SPECIAL_CLAIM_IN_MEM_NAME, namespace=pod.namespace, uid=got.uid,
                         generate_name=f"{pod.name}-extended-resources-",
                         owner_references=(OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True,
                                                          api_version="v1"),),
                         annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"})
    assert type(got) is ResourceClaim and _stored(got) == _stored(want)
    assert type(got.annotations) is FrozenDict and not got.admitted and got.decoded_under is None
    assert got.uid.startswith("extended-resources-") and got.uid != "extended-resources-0"
    other = dr._in_memory_special_claim(pod)
    assert other is not got and other.uid != got.uid  # a new temporary uid per claim
    assert _stored(dr._IN_MEMORY_PROTO)["namespace"] == "default"  # the kept claim is never written


@pytest.mark.parametrize("seed", range(20))
def test_created_special_claim_is_what_init_builds(seed):
    rng = random.Random(1000 + seed)
    protos: dict = {}
    specs = [_spec(rng) for _ in range(3)]
    fields = [claim_spec_fields(spec) for spec in specs]
    for _ in range(6):  # the kept claim per spec fields reused, and one kept per fields object
        k = rng.randrange(len(specs))
        pod = _pod(rng)
        refs = (OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True, api_version="v1"),)
        generate_name = f"{pod.name}-extended-resources-"
        manifest = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"generateName": generate_name, "namespace": pod.namespace}, "spec": specs[k]}
        got = dr._created_special_claim(protos, fields[k], generate_name, pod.namespace, refs, manifest)
        want = ResourceClaim(generate_name=generate_name, namespace=pod.namespace,
                             annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}, owner_references=refs,
                             manifest=manifest, **fields[k])
        assert type(got) is ResourceClaim and _stored(got) == _stored(want)
        assert got.uid == "" and not got.admitted and got.decoded_under is None
        # the same claim as the manifest's parse (what the client would decode), spec for spec
        parsed = parse_resource_claim(manifest)
        assert (got.requests, got.constraints, got.config) == (parsed.requests, parsed.constraints, parsed.config)
        kept = protos[id(fields[k])][1]
        assert kept is not got and kept.generate_name == "" and kept.manifest == {} and not kept.owner_references
    assert len(protos) <= len(specs)


def _reference_status_write(claim: ResourceClaim, changes: dict, manifest: dict) -> ResourceClaim:
    # what claim_with_status made before: KubeObject.replace (dataclasses.replace), then admitted
    new = KubeObject.replace(claim, manifest=manifest, **changes)
    new.admitted = True
    return new


def _claims(rng: random.Random) -> list[ResourceClaim]:
    spec = _spec(rng)
    read = ResourceClaim.from_manifest({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                        "metadata": {"name": "c", "namespace": "ns", "uid": "u-1",
                                                     "annotations": {"x": "y"}}, "spec": spec})
    read.decoded_under = (frozenset(), True)
    named_no_uid = ResourceClaim(name="n", namespace="ns")
    named_no_uid.uid = ""  # (a uid left empty: the status write derives it, as replace does)
    built = ResourceClaim(name="b", namespace="ns", labels={"k": "v"}, finalizers=(FINALIZER,))
    return [read, named_no_uid, built]


@pytest.mark.parametrize("seed", range(20))
def test_claim_with_status_is_what_replace_made(seed):
    rng = random.Random(2000 + seed)
    for claim in _claims(rng):
        kwargs: dict = {}
        if rng.random() < 0.7:
            kwargs["allocation"] = rng.choice([None, {"devices": {"results": [
                {"request": "r", "driver": "d", "pool": f"p{rng.randrange(3)}", "device": f"x{rng.randrange(9)}"}]}}])
        if rng.random() < 0.7:
            kwargs["reserved_for"] = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"}
                                      for i in range(rng.randrange(3))]
        if rng.random() < 0.5:
            kwargs["finalizers"] = rng.choice([(), (FINALIZER,), ("a", FINALIZER)])
        before = _stored(claim)
        got = claim_with_status(claim, **kwargs)
        changes = {k: (tuple(v) if k in ("reserved_for", "finalizers") else v) for k, v in kwargs.items()}
        want = _reference_status_write(claim, changes, dict(got.manifest))
        assert type(got) is ResourceClaim and _stored(got) == _stored(want), (claim.name, kwargs)
        assert got.admitted and got.decoded_under is None and got.uid
        assert got is not claim and _stored(claim) == before  # the original untouched


def test_all_zero_scores_are_left_unnormalized_and_others_normalized():
    """DynamicResources' NormalizeScore answers at once for all-zero scores (leaving them) and
    runs the default normalization otherwise, on views as the compiled cycle passes them."""
    import numpy as np

    from fastsched.config.args import DynamicResourcesArgs
    from fastsched.plugins.helper.normalize_score import default_normalize_score

    plugin = dr.DynamicResources(DynamicResourcesArgs())
    extra = np.zeros((2, 5), dtype=np.int64)
    assert plugin.normalize_score_vectorized(None, None, extra[1], None) is None and not extra.any()
    extra[1] = [0, 3, 0, 1, 0]
    want = extra[1].copy()
    default_normalize_score(100, False, want)
    assert plugin.normalize_score_vectorized(None, None, extra[1], None) is None
    assert extra[1].tolist() == want.tolist() and extra[1].tolist() != [0, 3, 0, 1, 0]
