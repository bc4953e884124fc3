"""GPU clusters for Dynamic Resource Allocation: nodes with ResourceSlices of GPUs, a DeviceClass,
claim templates and pods that use them, as manifests ``Scheduler.add`` takes.

A mixed GPU cluster and a training job in a few lines::

    from fastsched import Scheduler
    from fastsched.sim.gpu import GPUNodePool, gpu_cluster, gpu_claim_template, gpu_pods

    sched = Scheduler(seed=0)
    sched.add(gpu_cluster([GPUNodePool(4, model="a100", gpus=8), GPUNodePool(4, model="h100", gpus=4)]))
    sched.add(gpu_claim_template("two-a100", count=2, model="a100", match_attribute="numa"))
    sched.add(gpu_pods("train", 12, template="two-a100"))
    results = list(sched.run())

Each GPU is a device of the node's slice (pool = node name) with attributes ``model`` (string),
``uuid`` (string), ``index`` (int), ``numa`` (int: GPUs split evenly over ``numa_nodes``),
``driverVersion`` (version) and capacity ``memory``; attribute names are plain (they belong to
the driver's domain, so selectors read ``device.attributes["<driver>"].model``).
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["DEFAULT_DRIVER", "GPUNodePool", "gpu_node", "gpu_slice", "gpu_device_class", "gpu_cluster",
           "gpu_claim_template", "gpu_claim", "gpu_pods"]

#: the driver (and DeviceClass) name used unless told otherwise
DEFAULT_DRIVER = "gpu.example.com"
_RESOURCE = "resource.k8s.io/v1"

#: GPU memory by model, when not given
_MEMORY = {"a100": "80Gi", "h100": "80Gi", "l4": "24Gi", "t4": "16Gi", "v100": "32Gi"}


@dataclass(frozen=True)
class GPUNodePool:
    """``count`` nodes with ``gpus`` GPUs of ``model`` each (``memory`` per GPU, default by model),
    ``numa_nodes`` NUMA nodes, node capacity ``cpu`` / ``node_memory`` / ``pods`` and extra
    ``labels`` (the node also gets ``gpu.example.com/model: <model>``)."""

    count: int
    model: str = "a100"
    gpus: int = 8
    memory: str | None = None
    numa_nodes: int = 2
    cpu: str = "64"
    node_memory: str = "512Gi"
    pods: int = 110
    driver_version: str = "1.0.0"
    labels: Mapping[str, str] = field(default_factory=dict)
    prefix: str | None = None


def gpu_node(name: str, *, cpu: str = "64", memory: str = "512Gi", pods: int = 110,
             labels: Mapping[str, str] | None = None) -> dict:
    """A Node manifest (``kubernetes.io/hostname`` = name)."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
                       "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods)}}}


def gpu_slice(node: str, gpus: int, *, model: str = "a100", memory: str | None = None, numa_nodes: int = 2,
              driver: str = DEFAULT_DRIVER, driver_version: str = "1.0.0", seed: int = 0) -> dict:
    """The ResourceSlice of ``node``'s GPUs (one slice, pool named after the node, generation 1).
    UUIDs are derived from ``seed``, node and index, so the same arguments give the same slice."""
    per_numa = max(1, -(-gpus // max(1, numa_nodes)))
    devices = []
    for i in range(gpus):
        devices.append({
            "name": f"gpu-{i}",
            "attributes": {
                "model": {"string": model},
                "uuid": {"string": str(_uuid.uuid5(_uuid.NAMESPACE_DNS, f"{seed}/{node}/{i}"))},
                "index": {"int": i},
                "numa": {"int": i // per_numa},
                "driverVersion": {"version": driver_version},
            },
            "capacity": {"memory": {"value": memory or _MEMORY.get(model, "16Gi")}},
        })
    return {"apiVersion": _RESOURCE, "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{driver}".replace("/", "-")[:253]},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def gpu_device_class(name: str = DEFAULT_DRIVER, *, driver: str = DEFAULT_DRIVER,
                     selectors: Sequence[str] = ()) -> dict:
    """A DeviceClass selecting the driver's devices (plus ``selectors``)."""
    exprs = [f'device.driver == "{driver}"', *selectors]
    return {"apiVersion": _RESOURCE, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]}}


def gpu_cluster(pools: Iterable[GPUNodePool], *, driver: str = DEFAULT_DRIVER, device_class: str | None = DEFAULT_DRIVER,
                seed: int = 0) -> list[dict]:
    """Nodes and their slices for each pool (names ``<prefix or model>-<i>``), and the DeviceClass
    (unless ``device_class`` is None)."""
    out: list[dict] = []
    if device_class:
        out.append(gpu_device_class(device_class, driver=driver))
    for pool in pools:
        prefix = pool.prefix or f"gpu-{pool.model}"
        for i in range(pool.count):
            name = f"{prefix}-{i}"
            out.append(gpu_node(name, cpu=pool.cpu, memory=pool.node_memory, pods=pool.pods,
                                labels={f"{driver}/model": pool.model, **pool.labels}))
            out.append(gpu_slice(name, pool.gpus, model=pool.model, memory=pool.memory, numa_nodes=pool.numa_nodes,
                                 driver=driver, driver_version=pool.driver_version, seed=seed))
    return out


def _claim_spec(count: int, model: str | None, min_memory: str | None, match_attribute: str | None,
                device_class: str, driver: str, selectors: Sequence[str]) -> dict:
    exprs = list(selectors)
    if model:
        exprs.append(f'device.attributes["{driver}"].model == "{model}"')
    if min_memory:
        exprs.append(f'device.capacity["{driver}"].memory.compareTo(quantity("{min_memory}")) >= 0')
    exactly: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    if exprs:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    devices: dict[str, Any] = {"requests": [{"name": "gpus", "exactly": exactly}]}
    if match_attribute:
        name = match_attribute if "/" in match_attribute else f"{driver}/{match_attribute}"
        devices["constraints"] = [{"matchAttribute": name}]
    return {"devices": devices}


def gpu_claim_template(name: str, *, count: int = 1, model: str | None = None, min_memory: str | None = None,
                       match_attribute: str | None = None, namespace: str = "default",
                       device_class: str = DEFAULT_DRIVER, driver: str = DEFAULT_DRIVER,
                       selectors: Sequence[str] = ()) -> dict:
    """A ResourceClaimTemplate asking for ``count`` GPUs (of ``model``, with at least
    ``min_memory``, all sharing ``match_attribute`` such as ``numa`` when given)."""
    return {"apiVersion": _RESOURCE, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": _claim_spec(count, model, min_memory, match_attribute, device_class, driver, selectors)}}


def gpu_claim(name: str, *, count: int = 1, model: str | None = None, min_memory: str | None = None,
              match_attribute: str | None = None, namespace: str = "default", device_class: str = DEFAULT_DRIVER,
              driver: str = DEFAULT_DRIVER, selectors: Sequence[str] = ()) -> dict:
    """A ResourceClaim (shareable by several pods) with the same request as
    :func:`gpu_claim_template`."""
    return {"apiVersion": _RESOURCE, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": _claim_spec(count, model, min_memory, match_attribute, device_class, driver, selectors)}


def gpu_pods(prefix: str, count: int, *, template: str | None = None, claim: str | None = None,
             namespace: str = "default", cpu: str = "1", memory: str = "4Gi",
             labels: Mapping[str, str] | None = None) -> list[dict]:
    """``count`` pods ``<prefix>-<i>`` using claim template ``template`` (one claim each, made by
    the resourceclaim controller) or the shared claim ``claim``."""
    entry: dict[str, str] = {"name": "gpus"}
    if template:
        entry["resourceClaimTemplateName"] = template
    elif claim:
        entry["resourceClaimName"] = claim
    else:
        raise ValueError("gpu_pods needs a claim template or a claim")
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{prefix}-{i}", "namespace": namespace, "labels": dict(labels or {"job": prefix})},
             "spec": {"containers": [{"name": "main", "image": "trainer",
                                      "resources": {"requests": {"cpu": cpu, "memory": memory},
                                                    "claims": [{"name": "gpus"}]}}],
                      "resourceClaims": [entry]}}
            for i in range(count)]
