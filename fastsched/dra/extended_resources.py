"""Extended resources backed by DRA (DRAExtendedResource, GA and locked on at v1.37.2).

A pod may request an extended resource that no device plugin offers but a DeviceClass provides:
either the class's ``spec.extendedResourceName`` or its implicit name
``deviceclass.resource.kubernetes.io/<class name>``. NodeResourcesFit then leaves the resource to
DynamicResources on nodes whose allocatable does not have it, and DynamicResources allocates
devices of the class through a special ResourceClaim (upstream
``pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go``).

This module holds what both plugins share:

* :class:`ExtendedResourceCache`: upstream's ``k8s.io/dynamic-resource-allocation/deviceclass/
  extendedresourcecache``: resource name -> DeviceClass, fed by DeviceClass events in the order
  they happen (an explicit name two classes claim goes to the newer class by creation time, then
  to the lower name, as upstream -- including upstream's early return, which leaves the losing
  class's implicit name unmapped when it arrives after the winner);
* :func:`is_dra_extended_resource_name` (``schedutil.IsDRAExtendedResourceName``);
* :func:`create_requests_and_mappings` (``createRequestsAndMappings``): the special claim's device
  requests for one node and the container -> request mappings.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from ..api.resource import ALLOCATION_MODE_EXACT_COUNT, DeviceClass, DeviceRequest, DeviceSubRequest
from ..config._names import is_extended_resource_name

__all__ = ["DEVICE_CLASS_PREFIX", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "SPECIAL_CLAIM_IN_MEM_NAME",
           "ExtendedResourceCache", "create_requests_and_mappings", "is_dra_extended_resource_name"]

#: ``resourceapi.ResourceDeviceClassPrefix``: the implicit extended resource name of a class
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: ``resourceapi.ExtendedResourceClaimAnnotation``
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: ``specialClaimInMemName``: the special claim's name until PreBind creates it (not a valid name)
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"


@lru_cache(maxsize=1024)
def is_dra_extended_resource_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName``: an extended resource name or an implicit class name."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _created(dc: DeviceClass) -> float:
    # metav1.Time.UnixNano of an unset creationTimestamp (the zero time): far before any set one
    return dc.creation_timestamp if dc.creation_timestamp is not None else float("-inf")


class ExtendedResourceCache:
    """Upstream ``ExtendedResourceCache`` (resolver half): ``get_device_class(resource name)``."""

    __slots__ = ("_by_resource",)

    def __init__(self, classes: Iterable[DeviceClass] = ()):
        self._by_resource: dict[str, DeviceClass] = {}
        for dc in classes:
            self.on_add(dc)

    def get_device_class(self, resource_name: str) -> DeviceClass | None:
        return self._by_resource.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._by_resource)

    def on_add(self, dc: DeviceClass) -> None:
        self._update(dc, None)

    def on_update(self, old: DeviceClass, new: DeviceClass) -> None:
        self._update(new, old)

    def on_delete(self, dc: DeviceClass) -> None:
        self._by_resource.pop(DEVICE_CLASS_PREFIX + dc.name, None)
        if dc.extended_resource_name:
            self._by_resource.pop(dc.extended_resource_name, None)

    def _update(self, new: DeviceClass, old: DeviceClass | None) -> None:
        """``updateResourceName2class``."""
        table = self._by_resource
        same = table.get(new.extended_resource_name) if new.extended_resource_name else None
        if same is not None:
            a, b = _created(new), _created(same)
            if a < b or (a == b and new.name >= same.name):
                return  # the newer class keeps the name (and, as upstream, nothing else changes)
        if old is not None:
            table.pop(DEVICE_CLASS_PREFIX + old.name, None)
            if old.extended_resource_name:
                table.pop(old.extended_resource_name, None)
        if new.extended_resource_name:
            table[new.extended_resource_name] = new
        table[DEVICE_CLASS_PREFIX + new.name] = new


def _partition(containers: Sequence[Any], num_init: int) -> tuple[list[int], list[int]]:
    """``partitionContainerIndices``: long-lived (sidecars, regular) and short-lived (plain init)."""
    long_lived, short_lived = [], []
    for i, c in enumerate(containers):
        if i < num_init and not c.is_sidecar:
            short_lived.append(i)
        else:
            long_lived.append(i)
    return long_lived, short_lived


def _request_and_mappings(index: int, container: Any, resource: str, class_name: str,
                          reusable: Sequence[DeviceRequest | None]
                          ) -> tuple[DeviceRequest | None, list[dict[str, str]]]:
    """``createResourceRequestAndMappings``."""
    requests = container.requests
    if not requests or resource not in requests:
        return None, []
    want = int(requests[resource])
    if want == 0:
        return None, []
    mappings: list[dict[str, str]] = []
    total = 0
    for r in reusable:
        if r is not None and r.exactly is not None:
            total += r.exactly.count
            mappings.append({"containerName": container.name, "resourceName": resource, "requestName": r.name})
            if total >= want:
                return None, mappings
    keys = sorted(requests)
    ridx = keys.index(resource)
    name = f"container-{index}-request-{ridx}"
    request = DeviceRequest(name=name, exactly=DeviceSubRequest(
        name="", device_class_name=class_name, allocation_mode=ALLOCATION_MODE_EXACT_COUNT, count=want - total))
    mappings.append({"containerName": container.name, "resourceName": resource, "requestName": name})
    return request, mappings


def create_requests_and_mappings(pod: Any, extended_resources: Mapping[str, int], cache: ExtendedResourceCache
                                 ) -> tuple[list[DeviceRequest], list[dict[str, str]]]:
    """``createRequestsAndMappings``: the special claim's requests (sorted by name) and the
    container/resource -> request mappings for the resources of ``extended_resources``."""
    containers = [*pod.init_containers, *pod.containers]
    long_lived, short_lived = _partition(containers, len(pod.init_containers))
    device_requests: list[DeviceRequest] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended_resources):
        dc = cache.get_device_class(resource)
        if dc is None:
            continue
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            request, m = _request_and_mappings(i, containers[i], resource, dc.name, ())
            long_requests[i] = request
            long_mappings += m
        max_short: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            request, m = _request_and_mappings(i, containers[i], resource, dc.name, long_requests[i:])
            if request is not None:
                short_names.add(request.name)
                assert request.exactly is not None
                if max_short is None or (max_short.exactly is not None
                                         and max_short.exactly.count < request.exactly.count):
                    max_short = request
            short_mappings += m
        if max_short is not None and len(short_names) > 1:
            short_names.discard(max_short.name)
            for mapping in short_mappings:
                if mapping["requestName"] in short_names:
                    mapping["requestName"] = max_short.name
        if max_short is not None:
            device_requests.append(max_short)
        device_requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    device_requests.sort(key=lambda r: r.name)  # sort.Slice: names are distinct, so stable or not alike
    return device_requests, mappings
