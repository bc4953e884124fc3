"""PreBind hands the cluster a special claim as admitted (no validation, no PrepareForCreate) only
when its requests were validated and stored unchanged once before and its metadata is valid by
construction (``_metadata_valid``). Checked against the API validation itself over seeded pod
names (dots, dashes, lengths around the 253-character limit the generated name's prefix must
keep), and end to end: a pod whose name is too long for the claim's ``generateName`` still gets
the API server's error from PreBind."""
from __future__ import annotations

import random

import pytest

from fastsched.api.decode import parse_pod
from fastsched.api.objects import OwnerReference
from fastsched.api.resource import DeviceRequest, ExactDeviceRequest, ResourceClaim
from fastsched.api.strategy import prepare_for_create, validate
from fastsched.dra.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from fastsched.plugins.dynamicresources import _metadata_valid

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def _name(rng: random.Random, length: int) -> str:
    """A pod name of ``length`` characters: mostly valid, sometimes not (a dash or dot at an end,
    an upper-case letter, ``-.``)."""
    chars = [rng.choice(_ALNUM + "-." if 0 < i < length - 1 else _ALNUM) for i in range(length)]
    roll = rng.random()
    if roll < 0.1:
        chars[-1] = "-"
    elif roll < 0.2:
        chars[rng.randrange(length)] = "A"
    return "".join(chars)


def _claim(pod, **changes) -> ResourceClaim:
    fields = dict(generate_name=f"{pod.name}-extended-resources-", namespace=pod.namespace,
                  annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                  owner_references=(OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True,
                                                   api_version="v1"),),
                  requests=(DeviceRequest(name="container-0-request-0",
                                          exactly=ExactDeviceRequest(name="", device_class_name="test-class-0")),))
    fields.update(changes)
    return ResourceClaim(**fields)


@pytest.mark.parametrize("seed", range(20))
def test_metadata_valid_only_when_the_api_validation_passes(seed):
    rng = random.Random(seed)
    verdicts = set()
    for _ in range(60):
        length = rng.choice([1, 5, 30, 63, 200, 230, 233, 234, 235, 240, 253])
        pod = parse_pod({"metadata": {"name": _name(rng, length), "namespace": "ns", "uid": f"uid-{rng.random()}"},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}})
        pod.admitted = not validate(pod)  # (as the cluster admits a pod)
        claim = _claim(pod)
        fast = _metadata_valid(claim, pod)
        errors = validate(claim)
        verdicts.add((fast, not errors))
        if fast:
            assert errors == [], (pod.name, errors)
            assert prepare_for_create(claim) is claim
        elif pod.admitted:  # a valid pod's claim is refused only when its generateName is too long
            # (maskTrailingDash drops the last two characters for an "a": 254 characters pass)
            assert len(claim.generate_name) > 254 and errors, (len(claim.generate_name), errors)
    assert (True, True) in verdicts and (False, False) in verdicts


def test_metadata_valid_refuses_what_it_does_not_know():
    pod = parse_pod({"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
                     "spec": {"containers": [{"name": "c", "image": "i"}]}})
    pod.admitted = True
    assert _metadata_valid(_claim(pod), pod)
    other_ref = OwnerReference(kind="Pod", name="p", uid="", controller=True, api_version="v1")
    for changes in ({"namespace": "other"}, {"labels": {"a": "b"}}, {"generate_name": "x-"},
                    {"annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true", "b": "c"}},
                    {"owner_references": (other_ref,)}, {"name": "named"}):
        assert not _metadata_valid(_claim(pod, **changes), pod), changes
    pod.admitted = False
    assert not _metadata_valid(_claim(pod), pod)


def test_prebind_refuses_a_pod_name_too_long_for_the_claims_generate_name():
    """End to end: after pods whose claims took the admitted path, a pod with a 240-character
    name fails PreBind with the API server's generateName error (the full validation ran)."""
    from fastsched import Scheduler

    from .test_extended_resources import ERN, _container, _pod, device_class, make_node, worker_slice

    s = Scheduler(seed=1)
    s.add([device_class(), worker_slice("w0", devices=4)])
    s.add_nodes([make_node("w0")])
    s.add_pods([_pod([_container("c", {ERN: 1})], name=f"p{i}", uid=f"uid-{i}") for i in range(2)])
    s.add_pods([_pod([_container("c", {ERN: 1})], name="l" * 240, uid="uid-long")])
    results = {r.pod.name: r for r in s.run()}
    assert results["p0"].status == results["p1"].status == "Scheduled"
    long = results["l" * 240]
    assert long.status != "Scheduled"
    assert "metadata.generateName" in long.message and "253" in long.message, long.message
