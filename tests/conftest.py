"""Shared test helpers: small manifests for pods and nodes."""
from __future__ import annotations

import pytest


def pod_manifest(name="p", namespace="default", uid=None, priority=None, node_name=None,
                 cpu=None, memory=None, labels=None, scheduler_name=None, **spec):
    container = {"name": "c", "image": "busybox"}
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    if requests:
        container["resources"] = {"requests": requests}
    s = {"containers": [container], **spec}
    if priority is not None:
        s["priority"] = priority
    if node_name is not None:
        s["nodeName"] = node_name
    if scheduler_name is not None:
        s["schedulerName"] = scheduler_name
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def node_manifest(name="n", cpu="4", memory="8Gi", pods="110", labels=None, taints=None, **spec):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    s = dict(spec)
    if taints:
        s["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": s,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "capacity": {"cpu": cpu, "memory": memory, "pods": pods}}}


@pytest.fixture
def make_pod():
    from fastsched.api import Pod

    return lambda *a, **kw: Pod.from_manifest(pod_manifest(*a, **kw))


@pytest.fixture
def make_node():
    from fastsched.api import Node

    return lambda *a, **kw: Node.from_manifest(node_manifest(*a, **kw))
