"""Test helpers shared by the volume and DRA plugins' tests (plugins fastsched does not model yet)."""
from __future__ import annotations

import random
from typing import Any, Iterable

from fastsched.api import Pod
from fastsched.framework.vectorized import FilterVerdicts
from fastsched.framework.interface import EXTENSION_POINT_INTERFACES
from fastsched.testing import random_pod

#: one example entry per volume source, in the API's camelCase form
VOLUMES: dict[str, dict] = {
    "persistentVolumeClaim": {"name": "data", "persistentVolumeClaim": {"claimName": "data-claim"}},
    "ephemeral": {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
    "gcePersistentDisk": {"name": "gce", "gcePersistentDisk": {"pdName": "disk-1"}},
    "awsElasticBlockStore": {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}},
    "rbd": {"name": "rbd", "rbd": {"monitors": ["m1"], "image": "img"}},
    "iscsi": {"name": "iscsi", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}},
    "cinder": {"name": "cinder", "cinder": {"volumeID": "c-1"}},
    "azureDisk": {"name": "ad", "azureDisk": {"diskName": "d", "diskURI": "u"}},
    "azureFile": {"name": "af", "azureFile": {"secretName": "s", "shareName": "sh"}},
    "vsphereVolume": {"name": "vs", "vsphereVolume": {"volumePath": "/p"}},
    "portworxVolume": {"name": "px", "portworxVolume": {"volumeID": "p-1"}},
    "csi": {"name": "inline-csi", "csi": {"driver": "example.csi.k8s.io"}},
    "emptyDir": {"name": "tmp", "emptyDir": {}},
    "configMap": {"name": "cfg", "configMap": {"name": "cm"}},
    "secret": {"name": "sec", "secret": {"secretName": "s"}},
    "hostPath": {"name": "host", "hostPath": {"path": "/var/log"}},
    "nfs": {"name": "nfs", "nfs": {"server": "nfs.local", "path": "/export"}},
}

#: snake_case keys of a kubernetes-client model's ``to_dict()`` (absent sources present as None)
_SNAKE = {"persistentVolumeClaim": "persistent_volume_claim", "gcePersistentDisk": "gce_persistent_disk",
          "awsElasticBlockStore": "aws_elastic_block_store", "azureDisk": "azure_disk", "azureFile": "azure_file",
          "vsphereVolume": "vsphere_volume", "portworxVolume": "portworx_volume", "emptyDir": "empty_dir",
          "configMap": "config_map", "hostPath": "host_path"}


def snake_volume(source: str) -> dict:
    """The client-model (snake_case) form of ``VOLUMES[source]``, with the other sources set to None."""
    out = {key: None for key in set(_SNAKE.values()) | {"ephemeral", "rbd", "iscsi", "cinder", "csi", "secret", "nfs"}}
    out["name"] = VOLUMES[source]["name"]
    out[_SNAKE.get(source, source)] = VOLUMES[source][source]
    return out


def pod_with_volumes(*volumes: dict, claims: Iterable[dict] = (), name: str = "p") -> Pod:
    return Pod(name=name, volumes=tuple(volumes), resource_claims=tuple(claims))


def implemented_points(plugin: Any) -> set[str]:
    """The extension points MultiPoint expansion would put ``plugin`` at."""
    return {point for point, (iface, _) in EXTENSION_POINT_INTERFACES.items() if isinstance(plugin, iface)}


def statuses_agree(plugin: Any, state: Any, pod: Pod, batch: Any) -> list:
    """Run ``filter_vectorized`` and ``filter`` on every node of ``batch``; assert equal verdicts; return them."""
    res = plugin.filter_vectorized(state, pod, batch)
    if not isinstance(res, FilterVerdicts):
        res = FilterVerdicts.from_statuses([res] * len(batch))
    out = []
    for i, view in enumerate(batch):
        want = plugin.filter(state, pod, view)
        have = res.status(i)
        key = lambda s: None if s is None else (s.code(), s.reasons())  # noqa: E731
        assert key(have) == key(want), (view.name, have, want)
        out.append(want)
    return out


HARMLESS = ("emptyDir", "configMap", "secret", "hostPath", "nfs", "csi")


def random_volume_pod(rng: random.Random, i: int, unmodelled: Iterable[str] = (), p_unmodelled: float = 0.3) -> Pod:
    """``random_pod`` with 0-3 volumes of harmless kinds and, with probability ``p_unmodelled``,
    one volume of a kind in ``unmodelled``."""
    pod = random_pod(rng, i)
    volumes = [VOLUMES[s] for s in rng.sample(HARMLESS, k=rng.randint(0, 3))]
    unmodelled = tuple(unmodelled)
    if unmodelled and rng.random() < p_unmodelled:
        volumes.insert(rng.randint(0, len(volumes)), VOLUMES[rng.choice(unmodelled)])
    return pod.replace(volumes=tuple(volumes))
