"""``dra_extended.dra_guard`` (Fit's and BalancedAllocation's column guard) against its definition:
None unless some requested name is a DRA extended resource name, else the DeviceClasses' state.
Its loop skips the name check for names without "/"; this checks that shortcut on random mixes
of native, prefixed-native, extended and implicit class names."""
from __future__ import annotations

import random
import types

import pytest

from fastsched.dra.extended_resources import is_dra_extended_resource_name
from fastsched.framework.objects import ObjectStore
from fastsched.plugins.noderesources import dra_extended

NAMES = ["cpu", "memory", "pods", "ephemeral-storage", "hugepages-2Mi", "kubernetes.io/batch",
         "example.com/gpu", "foo.com/bar-1", "deviceclass.resource.kubernetes.io/gpu-class",
         "attachable-volumes-aws-ebs", "requests.example.com/x", "nvidia.com/gpu"]


@pytest.mark.parametrize("seed", range(20))
def test_dra_guard_is_none_exactly_without_dra_extended_names(seed):
    rng = random.Random(seed)
    handle = types.SimpleNamespace(client=ObjectStore([]))
    for _ in range(30):
        names = rng.sample(NAMES, rng.randint(0, 4))
        requests = {n: rng.randint(0, 3) for n in names}
        expected_none = not any(is_dra_extended_resource_name(n) for n in requests)
        got = dra_extended.dra_guard(handle, requests)
        assert (got is None) == expected_none, (requests, got)
