"""DynamicResources' batch Filter against its per-node Filter on seeded random clusters with
devices (several pools per node, incomplete pools, devices already allocated, claims with
selectors, counts, constraints, admin access, prioritized lists and allocated claims)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from fastsched.api import Pod
from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice
from fastsched.config.args import DynamicResourcesArgs
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

DRIVER = "gpu.example.com"
MODELS = ("a100", "h100", "l4")


class ListeningStore(ObjectStore):
    """An ObjectStore that reports writes to ``object_listeners`` as the Scheduler does, so the
    DRA manager keeps its indexes (and the batch Filter its columns) incrementally."""

    def __init__(self, objects=()):
        self.object_listeners = []
        super().__init__(objects)

    def add_object(self, obj):
        super().add_object(obj)
        obj = self.list_objects(getattr(obj, "KIND", ""))[-1] if hasattr(obj, "KIND") else obj
        for listener in self.object_listeners:
            listener(obj.KIND, None, obj)

    def update_object(self, obj):
        old = self.get_object(obj.KIND, obj.name, obj.namespace)
        super().update_object(obj)
        for listener in self.object_listeners:
            listener(obj.KIND, old, obj)


def random_cluster(rng: random.Random, n_nodes: int):
    objects = [parse_device_class({"metadata": {"name": "gpu"},
                                   "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})]
    nodes = [make_node(f"node-{i}") for i in range(n_nodes)]
    allocated_claims = []
    for i in range(n_nodes):
        for p in range(rng.choice([0, 1, 1, 1, 2])):
            n_dev = rng.randint(0, 6)
            incomplete = rng.random() < 0.1
            devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": rng.choice(MODELS)},
                                                           "numa": {"int": rng.randint(0, 1)}},
                        "capacity": {"memory": {"value": rng.choice(["16Gi", "40Gi", "80Gi"])}}} for j in range(n_dev)]
            objects.append(parse_resource_slice({"metadata": {"name": f"node-{i}-pool-{p}"}, "spec": {
                "driver": DRIVER, "nodeName": f"node-{i}",
                "pool": {"name": f"node-{i}-pool-{p}", "generation": 1, "resourceSliceCount": 2 if incomplete else 1},
                "devices": devices}}))
            if incomplete and devices and rng.random() < 0.5:
                # the missing slice: a duplicate device name (an invalid pool) or the rest of the
                # pool on the next node (complete across nodes: checkSlicesInPool)
                other = i if rng.random() < 0.5 else (i + 1) % n_nodes
                name = devices[0]["name"] if other == i else "gpu-x"
                objects.append(parse_resource_slice({"metadata": {"name": f"node-{i}-pool-{p}-b"}, "spec": {
                    "driver": DRIVER, "nodeName": f"node-{other}",
                    "pool": {"name": f"node-{i}-pool-{p}", "generation": 1, "resourceSliceCount": 2},
                    "devices": [{"name": name, "attributes": {"model": {"string": rng.choice(MODELS)}}}]}}))
            for d in devices:
                if rng.random() < 0.3:
                    allocated_claims.append((f"node-{i}-pool-{p}", d["name"], f"node-{i}"))
    for k, (pool, dev, node) in enumerate(allocated_claims):
        objects.append(parse_resource_claim({
            "metadata": {"name": f"taken-{k}", "namespace": "default", "uid": f"taken-{k}"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": pool, "device": dev}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                "reservedFor": [{"resource": "pods", "name": "x", "uid": f"x{k}"}]}}))
    return nodes, objects


def random_claim(rng: random.Random, name: str, nodes) -> dict:
    requests = []
    for r in range(rng.choice([1, 1, 1, 2])):
        selectors = []
        if rng.random() < 0.6:
            selectors.append(f'device.attributes["{DRIVER}"].model == "{rng.choice(MODELS)}"')
        if rng.random() < 0.2:
            selectors.append(f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0')
        body = {"deviceClassName": "gpu", "count": rng.randint(1, 3)}
        if selectors:
            body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
        if rng.random() < 0.05:
            body["adminAccess"] = True
        if rng.random() < 0.1:
            requests.append({"name": f"r{r}", "firstAvailable": [{"name": "big", **body, "count": 4},
                                                                 {"name": "small", **body}]})
            requests[-1]["firstAvailable"][0].pop("adminAccess", None)
            requests[-1]["firstAvailable"][1].pop("adminAccess", None)
        else:
            requests.append({"name": f"r{r}", "exactly": body})
    devices: dict = {"requests": requests}
    if rng.random() < 0.3:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/numa"}]
    manifest = {"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": {"devices": devices}}
    if rng.random() < 0.1:  # already allocated for some node, not reserved
        node = rng.choice(nodes).name
        manifest["status"] = {"allocation": {"devices": {"results": []}, "nodeSelector": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return manifest


def _statuses_per_node(plugin, state, pod, batch):
    return [plugin.filter(state, pod, info) for info in batch]


def _as_tuple(status):
    return None if status is None else (int(status.code()), tuple(status.reasons()))


@pytest.mark.parametrize("seed", range(40))
def test_batch_filter_agrees_with_per_node_filter(seed):
    rng = random.Random(seed)
    nodes, objects = random_cluster(rng, rng.randint(5, 40))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot(nodes).batch()
    exact_checked = 0
    for k in range(25):
        claims = [random_claim(rng, f"c{seed}-{k}-{j}", nodes) for j in range(rng.choice([1, 1, 2]))]
        for c in claims:
            store.add_object(parse_resource_claim(c))
        pod = Pod.from_manifest({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"p{seed}-{k}"},
                                 "spec": {"containers": [{"name": "c", "image": "x"}],
                                          "resourceClaims": [{"name": f"e{j}", "resourceClaimName": c["metadata"]["name"]}
                                                             for j, c in enumerate(claims)]}}, validate=False)
        state_a, state_b = CycleState(), CycleState()
        _, pre_a = plugin.pre_filter(state_a, pod, list(batch))
        _, pre_b = plugin.pre_filter(state_b, pod, list(batch))
        assert _as_tuple(pre_a) == _as_tuple(pre_b)
        if pre_a is not None:
            continue
        verdicts = plugin.filter_vectorized(state_a, pod, batch)
        got = [_as_tuple(verdicts.status(i)) for i in range(len(batch))]
        want = [_as_tuple(s) for s in _statuses_per_node(plugin, state_b, pod, batch)]
        assert got == want, (seed, k)
        # the node Reserve picks gets the allocation the per-node Filter computed
        feasible = [batch[i].node().name for i, s in enumerate(want) if s is None]
        if feasible:
            node = feasible[0]
            assert plugin.reserve(state_a, pod, node) is None
            sa = state_a.read("DynamicResources")
            sb = state_b.read("DynamicResources")
            assert [sa.allocations[i] for i in sa.to_allocate] == sb.node_allocations.get(node, [])
            exact_checked += 1
            plugin.unreserve(state_a, pod, node)
    assert exact_checked > 0  # some claim was allocatable, so Reserve's allocation was compared
