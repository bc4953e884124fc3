"""The DeviceClass -> extended resource resolver against a model of upstream's cache.

Upstream's ``k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache`` (v0.37.2,
used by the v1.37.2 scheduler) is fed by the DeviceClass informer's events and keeps what they
leave, quirks included: a delete drops the class's explicit name even when another class holds it,
an update that loses the explicit name to a newer class changes nothing (the old object stays
mapped under the class's implicit name), and a class that loses on its add never gets its
implicit name. So after some update/delete sequences the event-fed cache differs from one built
afresh from the current list of classes.

fastsched has both: the DRA manager of a client with object listeners (a Scheduler's cluster)
keeps an incremental :class:`ExtendedResourceCache` fed by the class events; a client that lists
objects without sending events (``ObjectStore``: a framework built alone) gets one built from its
list, which is what upstream's cache holds right after its informer's initial list of those
classes. ``UpstreamCache`` below is written from the Go source, not from fastsched's class; seeded
random add/update/delete sequences drive a Scheduler's cluster and compare.
"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler
from fastsched.api.resource import DeviceClass, parse_device_class
from fastsched.dra.extended_resources import DEVICE_CLASS_PREFIX, ExtendedResourceCache
from fastsched.framework.objects import ObjectStore
from fastsched.plugins.dynamicresources.manager import DRAManager, manager_for

# metav1.Time{}.UnixNano(): the zero time's nanoseconds overflow int64 and wrap (Go does not check)
_ZERO_TIME_UNIX_NANO = ((-62135596800 * 10**9 + 2**63) % 2**64) - 2**63


def _unix_nano(dc: DeviceClass) -> int:
    if dc.creation_timestamp is None:
        return _ZERO_TIME_UNIX_NANO
    return int(round(dc.creation_timestamp * 1e9))


class UpstreamCache:
    """``ExtendedResourceCache.resourceName2class`` with OnAdd/OnUpdate/OnDelete, as the Go code
    does it (a nil ``Spec.ExtendedResourceName`` is fastsched's empty string)."""

    def __init__(self) -> None:
        self.resource_name_to_class: dict[str, DeviceClass] = {}

    def on_add(self, dc: DeviceClass) -> None:
        self._update_resource_name_to_class(dc, None)

    def on_update(self, old: DeviceClass, new: DeviceClass) -> None:
        self._update_resource_name_to_class(new, old)

    def on_delete(self, dc: DeviceClass) -> None:
        m = self.resource_name_to_class
        m.pop(DEVICE_CLASS_PREFIX + dc.name, None)
        if dc.extended_resource_name:
            m.pop(dc.extended_resource_name, None)

    def _update_resource_name_to_class(self, new: DeviceClass, old: DeviceClass | None) -> None:
        m = self.resource_name_to_class
        same = m.get(new.extended_resource_name) if new.extended_resource_name else None
        if same is not None:
            a, b = _unix_nano(new), _unix_nano(same)
            if a < b:
                return
            if a == b and new.name >= same.name:
                return
        if old is not None:
            m.pop(DEVICE_CLASS_PREFIX + old.name, None)
            if old.extended_resource_name:
                m.pop(old.extended_resource_name, None)
        if new.extended_resource_name:
            m[new.extended_resource_name] = new
        m[DEVICE_CLASS_PREFIX + new.name] = new


NAMES = ("a", "b", "c", "d")
ERNS = ("", "example.com/gpu", "example.com/gpu", "example.com/fpga")
TIMES = (None, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
RESOURCES = ("example.com/gpu", "example.com/fpga", *(DEVICE_CLASS_PREFIX + n for n in NAMES))


def _manifest(rng: random.Random, name: str) -> dict:
    meta: dict = {"name": name}
    created = rng.choice(TIMES)
    if created:
        meta["creationTimestamp"] = created
    ern = rng.choice(ERNS)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta,
            "spec": {"extendedResourceName": ern} if ern else {}}


def _view(get) -> dict[str, DeviceClass]:
    """Every resource name's class, by identity (a stale old version is not the current one)."""
    return {r: dc for r in RESOURCES if (dc := get(r)) is not None}


def _same(got: dict[str, DeviceClass], want: dict[str, DeviceClass]) -> bool:
    return got.keys() == want.keys() and all(got[r] is want[r] for r in want)


def _random_ops(rng: random.Random, n: int) -> list[tuple[str, str, dict | None]]:
    ops: list[tuple[str, str, dict | None]] = []
    present: set[str] = set()
    for _ in range(n):
        name = rng.choice(NAMES)
        if name not in present:
            ops.append(("add", name, _manifest(rng, name)))
            present.add(name)
        elif rng.random() < 0.35:
            ops.append(("delete", name, None))
            present.discard(name)
        else:
            ops.append(("update", name, _manifest(rng, name)))
    return ops


@pytest.mark.parametrize("seed", range(40))
def test_scheduler_resolver_follows_upstream_cache(seed):
    """A Scheduler's DRA manager: its resolver after each class add, update or delete is
    upstream's cache fed the same events (the manager created at a random step: upstream's
    informer starting then, its initial list in the cluster's order)."""
    rng = random.Random(seed)
    sched = Scheduler(seed=0)
    cluster = sched.cluster
    ops = _random_ops(rng, 30)
    start = rng.randrange(len(ops) + 1)
    model: UpstreamCache | None = None
    manager: DRAManager | None = None
    current: dict[str, DeviceClass] = {}
    for step, (op, name, manifest) in enumerate(ops + [("noop", "", None)]):
        if step == start:
            manager = manager_for(cluster)
            assert manager.incremental
            model = UpstreamCache()
            for dc in cluster.list_objects("DeviceClass"):
                model.on_add(dc)
        if op == "noop":
            break
        old = current.get(name)
        if op == "add":
            sched.add(manifest)
        elif op == "update":
            cluster.update_object(manifest)
        else:
            cluster.delete_object("DeviceClass", name, "")
        new = cluster.get_object("DeviceClass", name, "")
        if new is None:
            current.pop(name, None)
        else:
            assert isinstance(new, DeviceClass)
            current[name] = new
        if model is not None:
            if op == "add":
                model.on_add(new)
            elif op == "update":
                model.on_update(old, new)
            else:
                model.on_delete(old)
        if manager is not None:
            assert model is not None
            got = _view(manager.device_class_resolver().get_device_class)
            want = _view(model.resource_name_to_class.get)
            assert _same(got, want), (seed, step, ops[:step + 1], got, want)


@pytest.mark.parametrize("seed", range(40))
def test_listed_resolver_is_upstream_cache_after_its_initial_list(seed):
    """A client without events (ObjectStore): the resolver is built from the list each time it is
    asked, which is upstream's cache right after an informer's initial list of those classes, in
    the list's order."""
    rng = random.Random(seed)
    store = ObjectStore()
    for op, name, manifest in _random_ops(rng, 30):
        if op == "add":
            store.add_object(manifest)
        elif op == "update":
            store.update_object(manifest)
        else:
            store.delete_object("DeviceClass", name, "")
        manager = DRAManager(store)
        assert not manager.incremental
        model = UpstreamCache()
        for dc in store.list_objects("DeviceClass"):
            model.on_add(dc)
        assert _same(_view(manager.device_class_resolver().get_device_class),
                     _view(model.resource_name_to_class.get))


def _dc(name: str, ern: str = "", created: str | None = None) -> DeviceClass:
    meta: dict = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return parse_device_class({"metadata": meta, "spec": {"extendedResourceName": ern} if ern else {}})


def test_event_fed_and_listed_caches_differ_where_upstream_does():
    """The two differ after these sequences, and the event-fed one is upstream's: a delete drops
    the explicit name another class holds; a losing update leaves the old object mapped."""
    gpu = "example.com/gpu"
    older, newer = _dc("a", gpu, "2026-01-01T00:00:00Z"), _dc("b", gpu, "2026-01-02T00:00:00Z")
    for cache in (ExtendedResourceCache(), UpstreamCache()):
        cache.on_add(older)
        cache.on_add(newer)
        cache.on_delete(older)  # "a" lost the name, but its delete drops it all the same
        get = cache.get_device_class if isinstance(cache, ExtendedResourceCache) else \
            cache.resource_name_to_class.get
        assert get(gpu) is None
        assert get(DEVICE_CLASS_PREFIX + "b") is newer
    assert ExtendedResourceCache([newer]).get_device_class(gpu) is newer  # built from the list

    older2 = _dc("a", gpu, "2026-01-01T00:00:00Z")  # "a" updated: it still loses to "b"
    for cache in (ExtendedResourceCache(), UpstreamCache()):
        cache.on_add(older)
        cache.on_add(newer)
        cache.on_update(older, older2)
        get = cache.get_device_class if isinstance(cache, ExtendedResourceCache) else \
            cache.resource_name_to_class.get
        assert get(DEVICE_CLASS_PREFIX + "a") is older  # the old version, as upstream
    assert ExtendedResourceCache([older2, newer]).get_device_class(DEVICE_CLASS_PREFIX + "a") is older2
