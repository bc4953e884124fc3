"""The compiled cycle's guards that NodeResourcesFit and BalancedAllocation give (``dra_guard``:
the DeviceClasses' version for pods requesting DRA extended resource names) answer, on their
native-names fast path, what the per-name test answers, on seeded random request names."""
import itertools
import random

from fastsched import Scheduler
from fastsched.dra.extended_resources import is_dra_extended_resource_name
from fastsched.plugins.noderesources.dra_extended import _NATIVE_NAMES, dra_guard

NAMES = ("cpu", "memory", "ephemeral-storage", "pods", "hugepages-2Mi", "example.com/gpu", "example.com/other",
         "deviceclass.resource.kubernetes.io/gpu", "nvidia.com/gpu", "requests.cpu", "kubernetes.io/foo")


def _handle():
    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    return next(p for p in fw.filter_plugins if p.name() == "NodeResourcesFit").handle


def test_native_names_are_never_dra_extended_resource_names():
    assert _NATIVE_NAMES and not any(is_dra_extended_resource_name(n) for n in _NATIVE_NAMES)


def test_dra_guard_answers_as_the_per_name_test():
    handle = _handle()
    rng = random.Random(11)
    combos = [c for r in range(0, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(200)]
    for names in combos:
        requests = {name: 1 for name in names}
        expected_none = not any(is_dra_extended_resource_name(n) for n in names)
        assert (dra_guard(handle, requests) is None) == expected_none, names


def test_dynamicresources_guard_answers_as_the_per_name_test():
    """DynamicResources' guard: None for requests without a DRA extended resource name (its
    cpu-and-memory fast path included), the DeviceClasses' version otherwise."""
    from fastsched.testing import make_pod

    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    dra = next(p for p in fw.pre_filter_plugins if p.name() == "DynamicResources")
    rng = random.Random(12)
    combos = [c for r in range(1, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(100)]
    for names in combos:
        pod = make_pod("p", requests={name: "1" for name in names})
        expected_none = not any(is_dra_extended_resource_name(n) for n in pod.requests)
        assert (dra.column_guard(pod, s.snapshot.table) is None) == expected_none, names


def test_dynamicresources_mapped_extended_resources_answers_as_the_per_name_test():
    """What DynamicResources' PreFilter reads each cycle for pods without claims: the requests of
    DRA extended resource names when one maps to a DeviceClass (None for cpu-and-memory pods at
    once), on seeded random request names."""
    from fastsched.testing import make_pod

    s = Scheduler(seed=0)
    s.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"extendedResourceName": "example.com/gpu"}})
    (fw,) = s.profiles.values()
    dra = next(p for p in fw.pre_filter_plugins if p.name() == "DynamicResources")
    resolver = dra.manager.device_class_resolver()
    rng = random.Random(13)
    combos = [c for r in range(1, 4) for c in itertools.combinations(NAMES, r)]
    combos += [tuple(rng.sample(NAMES, rng.randint(1, len(NAMES)))) for _ in range(100)]
    mapped = 0
    for names in combos:
        pod = make_pod("p", requests={name: "1" for name in names})
        dra_names = [n for n in pod.requests if is_dra_extended_resource_name(n)]
        maps = any(pod.requests[n] and resolver.get_device_class(n) is not None for n in dra_names)
        expected = {n: int(pod.requests[n]) for n in dra_names} if maps else None
        assert dra.mapped_extended_resources(pod) == expected, names
        mapped += maps
    assert mapped > 20
