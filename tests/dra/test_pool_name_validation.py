"""``validatePoolName`` (k8s/pkg/apis/resource/validation/validation.go) as ResourceSlices and
DeviceTaintRules reach it: each '/'-separated part checked as a DNS subdomain with the error naming
that part, the whole name at most 253 bytes, an empty name Required; ``validateResourcePool``'s
slice count before its generation. Rows from TestValidateResourceSlice (bad-multi-pool-name,
good-pool-name, bad-pool, missing-pool-name) and TestValidateDeviceTaint (bad-pool), plus a
multi-part rule pool and an empty one through the same function."""
from __future__ import annotations

import pytest

from fastsched.api.resource import parse_device_taint_rule, parse_resource_slice
from fastsched.api.strategy import validate

GOOD = "foo"
BAD = "!@#$%^"
DRIVER = "driver.example.com"
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
             "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _slice(node_name, pool_name=None, slice_count=1, generation=0):
    """``testResourceSlice(goodName, nodeName, driverName, 1)``: the pool named as the node."""
    return parse_resource_slice({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": GOOD},
        "spec": {"driver": DRIVER, "nodeName": node_name,
                 "pool": {"name": node_name if pool_name is None else pool_name,
                          "resourceSliceCount": slice_count, "generation": generation},
                 "devices": [{"name": "device-0"}]}})


SLICE_CASES = {
    "bad-multi-pool-name": (_slice(f"{BAD}/{BAD}"), [
        f'spec.pool.name: Invalid value: "{BAD}": {SUBDOMAIN}',
        f'spec.pool.name: Invalid value: "{BAD}": {SUBDOMAIN}',
        f'spec.nodeName: Invalid value: "{BAD}/{BAD}": {SUBDOMAIN}']),
    "good-pool-name": (_slice(GOOD, "x" * 253), []),
    "bad-pool": (_slice(GOOD, "x/" * 126 + "xy", slice_count=0, generation=-1), [
        "spec.pool.name: Too long: may not be more than 253 bytes",
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"]),
    "missing-pool-name": (_slice(GOOD, ""), ["spec.pool.name: Required value"]),
    # one bad part among good ones: only that part is named
    "one-bad-part": (_slice(GOOD, f"{GOOD}/{BAD}/{GOOD}"), [f'spec.pool.name: Invalid value: "{BAD}": {SUBDOMAIN}']),
}


@pytest.mark.parametrize("name", list(SLICE_CASES))
def test_validate_resource_slice_pool(name):
    rs, want = SLICE_CASES[name]
    assert [str(e) for e in validate(rs)] == want


def _rule(pool):
    return parse_device_taint_rule({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": GOOD},
        "spec": {"deviceSelector": {"driver": "test.example.com", "pool": pool, "device": GOOD},
                 "taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"}}})


RULE_CASES = {
    "good": (GOOD, []),
    "bad-pool": (BAD, [f'spec.deviceSelector.pool: Invalid value: "{BAD}": {SUBDOMAIN}']),
    "bad-part": (f"{GOOD}/{BAD}", [f'spec.deviceSelector.pool: Invalid value: "{BAD}": {SUBDOMAIN}']),
    "empty": ("", ["spec.deviceSelector.pool: Required value"]),
    "too-long": ("x/" * 126 + "xy", ["spec.deviceSelector.pool: Too long: may not be more than 253 bytes"]),
}


@pytest.mark.parametrize("name", list(RULE_CASES))
def test_validate_device_taint_rule_pool(name):
    pool, want = RULE_CASES[name]
    assert [str(e) for e in validate(_rule(pool))] == want
