"""DynamicResources' batch Filter grouping nodes by shape (one Filter per node shape and special
claim) against the per-node Filter with node shapes off, over several cycles of one manager whose
kept shape keys (``NodeShapes.node_key``) must follow the devices reserved and freed in between.

Seeded random clusters: nodes cloned from a few templates (devices equal, node, pool and slice
names their own), some nodes with devices of their own, tainted devices, devices allowing multiple
allocations (consumable capacity), partitionable devices (shared counters), two-slice pools,
devices held by allocated claims; nodes whose device plugin serves the extended resource; pods
requesting DRA-backed extended resources (explicit and implicit class names), with and without
claims of their own (counts, constraints, prioritized lists). Verdicts, messages, the allocation
Reserve takes for each passing node, the special claim and Score must equal the per-node path's.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from fastsched.api import Pod
from fastsched.api.resource import parse_device_class, parse_resource_claim, parse_resource_slice
from fastsched.config.args import DynamicResourcesArgs
from fastsched.dra.extended_resources import DEVICE_CLASS_PREFIX
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.status import Code
from fastsched.plugins.dynamicresources import DynamicResources, vectorized
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node

from .test_vectorized import ListeningStore, _as_tuple, _pre_filtered_pair

DRIVER = "gpu.example.com"
ERN, ERN2 = "example.com/gpu", "example.com/vf"
UNMAPPED = "example.com/fpga"
MODELS = ("a100", "h100")


def _device(rng: random.Random, name: str, kind: str) -> dict:
    d: dict = {"name": name, "attributes": {"model": {"string": rng.choice(MODELS)}, "numa": {"int": rng.randint(0, 1)}},
               "capacity": {"memory": {"value": rng.choice(["16Gi", "40Gi"])}}}
    if kind == "tainted" and rng.random() < 0.5:
        d["taints"] = [{"key": "k", "value": "v", "effect": rng.choice(["NoSchedule", "NoExecute", "None"])}]
    if kind == "consumable" and rng.random() < 0.6:
        d["allowMultipleAllocations"] = True
    if kind == "partitionable":
        d["consumesCounters"] = [{"counterSet": "cs", "counters": {"mem": {"value": "40Gi"}}}]
    return d


def _template(rng: random.Random) -> tuple[str, list[dict], list[dict]]:
    kind = rng.choice(["plain", "plain", "plain", "two-slices", "tainted", "consumable", "partitionable"])
    first = [_device(rng, f"gpu-{j}", kind) for j in range(rng.randint(1, 5))]
    second = [_device(rng, f"vf-{j}", kind) for j in range(rng.randint(1, 3))] if kind == "two-slices" else []
    return kind, first, second


def _slice(name: str, node: str, pool: str, devices: list[dict], count: int = 1, kind: str = "plain") -> object:
    spec: dict = {"driver": DRIVER, "nodeName": node, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                  "devices": devices}
    if kind == "partitionable":
        spec["sharedCounters"] = [{"name": "cs", "counters": {"mem": {"value": "80Gi"}}}]
    return parse_resource_slice({"metadata": {"name": name}, "spec": spec})


def _gpu_class_cluster(nodes: list, slices: list) -> tuple:
    """The store (DeviceClass ``gpu`` for ERN, every device of DRIVER, and ``slices``), a
    DynamicResources reading it, and a batch over ``nodes``."""
    store = ListeningStore([parse_device_class({"metadata": {"name": "gpu"}, "spec": {
        "extendedResourceName": ERN, "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}),
        *slices])
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    return store, plugin, build_snapshot(nodes).batch()


def shaped_extended_cluster(rng: random.Random):
    classes = [parse_device_class({"metadata": {"name": "gpu"}, "spec": {
                   "extendedResourceName": ERN,
                   "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}),
               parse_device_class({"metadata": {"name": "vf"}, "spec": {
                   "extendedResourceName": ERN2,
                   "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "h100"'}}]}})]
    templates = [_template(rng) for _ in range(rng.randint(1, 3))]
    nodes, objects = [], list(classes)
    held = 0
    for i in range(rng.randint(6, 24)):
        name = f"node-{i}"
        extra = {}
        if rng.random() < 0.2:  # the node's device plugin serves (or once served) the resource
            extra[rng.choice([ERN, ERN2])] = rng.choice(["0", "2"])
        if rng.random() < 0.5:  # a resource no class maps: only a device plugin offers it
            extra[UNMAPPED] = rng.choice(["0", "1"])
        nodes.append(make_node(name, extra=extra))
        if rng.random() < 0.1:
            continue  # no devices
        kind, first, second = templates[i % len(templates)]
        if rng.random() < 0.15:  # a node of its own
            kind, first, second = _template(rng)
        node_slices = [_slice(f"{name}-s1", name, f"{name}-p", first, 2 if second else 1, kind)]
        if second:
            node_slices.append(_slice(f"{name}-s2", name, f"{name}-p", second, 2, kind))
        objects.extend(node_slices)
        for s in node_slices:
            for d in s.devices:
                if rng.random() < 0.1:
                    objects.append(parse_resource_claim({
                        "metadata": {"name": f"taken-{held}", "namespace": "default", "uid": f"taken-{held}"},
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                        "status": {"allocation": {
                            "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": s.pool_name,
                                                     "device": d.name}]},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [name]}]}]}},
                            "reservedFor": [{"resource": "pods", "name": "x", "uid": f"x{held}"}]}}))
                    held += 1
    return nodes, objects


def _user_claim(rng: random.Random, name: str) -> dict:
    requests = []
    for r in range(rng.choice([1, 1, 2])):
        body: dict = {"deviceClassName": "gpu", "count": rng.randint(1, 2)}
        if rng.random() < 0.4:
            body["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{rng.choice(MODELS)}"'}}]
        if rng.random() < 0.2:
            requests.append({"name": f"r{r}", "firstAvailable": [{"name": "big", **body, "count": 3},
                                                                 {"name": "small", **body}]})
        else:
            requests.append({"name": f"r{r}", "exactly": body})
    devices: dict = {"requests": requests}
    if len(requests) > 1 and rng.random() < 0.5:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/numa"}]
    return {"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": {"devices": devices}}


def _pod(rng: random.Random, store, seed: int, k: int) -> Pod:
    requests = {}
    if rng.random() < 0.85:
        requests[rng.choice([ERN, DEVICE_CLASS_PREFIX + "gpu"])] = str(rng.randint(1, 2))
    if rng.random() < 0.3:
        requests[ERN2] = "1"
    if requests and rng.random() < 0.3:
        requests[UNMAPPED] = "1"
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
    if rng.random() < 0.3 or not requests:
        claim = _user_claim(rng, f"c{seed}-{k}")
        store.add_object(parse_resource_claim(claim))
        spec["resourceClaims"] = [{"name": "e0", "resourceClaimName": claim["metadata"]["name"]}]
    return Pod.from_manifest({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"p{seed}-{k}"},
                              "spec": spec}, validate=False)


def _requests(claim):
    return None if claim is None else repr(claim.requests)


@pytest.mark.parametrize("seed", range(60))
def test_shape_batch_filter_agrees_with_per_node_filter_across_cycles(seed):
    rng = random.Random(7000 + seed)
    nodes, objects = shaped_extended_cluster(rng)
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot(nodes).batch()
    reserved: list[tuple] = []
    compared = 0
    for k in range(14):
        pod = _pod(rng, store, seed, k)
        states = _pre_filtered_pair(plugin, pod, batch)
        if states is None:
            continue
        state_a, state_b = states
        sa, sb = state_a.read("DynamicResources"), state_b.read("DynamicResources")
        if sa.extended_index is not None:  # (one special claim uid: the shareIDs derive from it)
            sb.claims[sb.extended_index] = sa.claims[sa.extended_index]
        if sb.allocator is not None:
            sb.allocator.shapes = None  # every node searched on its own, no kept keys read
        verdicts = plugin.filter_vectorized(state_a, pod, batch)
        got = [_as_tuple(verdicts.status(i)) for i in range(len(batch))]
        want = [_as_tuple(plugin.filter(state_b, pod, info)) for info in batch]
        assert got == want, (seed, k)
        assert sa.unavailable_claims == sb.unavailable_claims
        scores, status = plugin.score_vectorized(state_a, pod, batch)
        assert status is None
        passing = [i for i, s in enumerate(want) if s is None]
        for i in passing:
            name = batch[i].node().name
            assert int(scores[i]) == plugin.score(state_b, pod, batch[i])[0], (seed, k, name)
            assert plugin.reserve(state_a, pod, name) is None
            # (after Reserve: a node the device columns passed gets its special claim there)
            assert _requests(sa.node_extended.get(name, (None,))[0]) == _requests(sb.node_extended.get(name, (None,))[0])
            assert [sa.allocations[j] for j in sa.to_allocate] == sb.node_allocations.get(name, [None] * len(sa.to_allocate)) \
                or not sb.node_allocations.get(name), (seed, k, name)
            if sb.node_allocations.get(name):
                compared += 1
            plugin.unreserve(state_a, pod, name)
        if passing:
            # keep one allocation in flight, so the next cycles see devices held that were free
            # (the kept shape keys of that node must go); now and then free an earlier one
            name = batch[rng.choice(passing)].node().name
            if plugin.reserve(state_a, pod, name) is None:
                reserved.append((state_a, pod, name))
        if reserved and rng.random() < 0.3:
            plugin.unreserve(*reserved.pop(rng.randrange(len(reserved))))
    if seed == 0:
        assert compared > 0


class _Store(ListeningStore):
    def delete_object(self, kind, name, namespace="default"):
        old = self.get_object(kind, name, namespace)
        super().delete_object(kind, name, namespace)
        for listener in self.object_listeners:
            listener(kind, old, None)


@pytest.mark.parametrize("seed", range(20))
def test_extended_resource_claim_index_finds_what_the_scan_finds(seed):
    """The manager's index of extended resource claims by controller against upstream's scan of
    every claim (findExtendedResourceClaim), through adds, updates (annotation or owner changed)
    and deletes; pods with one, none or several candidate claims."""
    from fastsched.dra.extended_resources import EXTENDED_RESOURCE_CLAIM_ANNOTATION
    from fastsched.plugins.dynamicresources import find_extended_resource_claim

    rng = random.Random(9100 + seed)
    store = _Store([])
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    plugin.manager  # noqa: B018 (the manager listens from now on)
    pods = [Pod.from_manifest({"metadata": {"name": f"p{i % 3}", "namespace": "default", "uid": f"u{i}"},
                               "spec": {"containers": [{"name": "c", "image": "x"}]}}, validate=False)
            for i in range(5)]

    def manifest(name):
        owners = [{"apiVersion": "v1", "kind": "Pod", "name": f"p{rng.randrange(3)}", "uid": f"u{rng.randrange(5)}",
                   "controller": rng.random() < 0.8} for _ in range(rng.choice([1, 1, 2]))]
        meta = {"name": name, "namespace": "default", "uid": f"{name}-{rng.random()}", "ownerReferences": owners}
        if rng.random() < 0.8:
            meta["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: rng.choice(["true", "true", "false"])}
        return parse_resource_claim({"metadata": meta, "spec": {"devices": {"requests": []}}})

    for step in range(60):
        names = [c.name for c in store.list_objects("ResourceClaim")]
        action = rng.random()
        if names and action < 0.25:
            store.delete_object("ResourceClaim", rng.choice(names), "default")
        elif names and action < 0.5:
            store.update_object(manifest(rng.choice(names)))
        else:
            store.add_object(manifest(f"c{step}"))
        for pod in pods:
            want = find_extended_resource_claim(pod, store.list_objects("ResourceClaim"))
            assert plugin._find_extended_resource_claim(pod) is want, (seed, step, pod.uid)


def test_nodes_of_one_shape_take_one_filter_per_cycle(monkeypatch):
    """The batch Filter runs the per-node Filter once per (shape, special claim), cycle after cycle
    (kept keys compared by identity: equal shapes must be one interned object), and again for a
    node whose devices' held state changed. (The device columns, which would decide these nodes
    without any Filter, are off here: this is the per-node path's grouping.)"""
    monkeypatch.setattr(vectorized, "_extended_columns", lambda *args: None)
    devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": "a100"}}} for j in range(3)]
    nodes = [make_node(f"node-{i}") for i in range(8)]
    store, plugin, batch = _gpu_class_cluster(nodes, [_slice(f"node-{i}-s", f"node-{i}", f"node-{i}-p", devices)
                                                      for i in range(8)])
    calls: list[str] = []
    original = plugin._filter_node

    def counting(s, pod, node):
        calls.append(node.name)
        return original(s, pod, node)

    plugin._filter_node = counting
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {ERN: "1"}}}]}}, validate=False)
    for cycle in range(3):
        calls.clear()
        state = CycleState()
        _, pre = plugin.pre_filter(state, pod, list(batch))
        assert pre is None
        verdicts = plugin.filter_vectorized(state, pod, batch)
        assert all(verdicts.status(i) is None for i in range(len(batch)))
        assert len(calls) == (1 if cycle < 2 else 2), (cycle, calls)
        if cycle == 1:  # one node's device goes in flight: its shape differs from the others'
            assert plugin.reserve(state, pod, "node-3") is None


def test_device_columns_decide_nodes_offering_none_of_the_resources():
    """A pod whose only claim is the special one, on nodes offering none of its extended resources
    (absent or zero in their allocatable): the device columns decide every node, with no per-node
    Filter (the allocator runs once, in Reserve, for the chosen node, with the plan's special
    claim); a node whose device plugin
    serves the resource still takes the per-node Filter. Nodes with too few free devices fail
    with the allocator's message."""
    devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": "a100"}}} for j in range(2)]
    nodes = [make_node(f"node-{i}", extra={ERN: "0"} if i == 1 else {ERN: "4"} if i == 5 else {}) for i in range(6)]
    store, plugin, batch = _gpu_class_cluster(
        nodes, [_slice(f"node-{i}-s", f"node-{i}", f"node-{i}-p", devices[:1] if i == 2 else devices)
                for i in range(4)])  # (node-5 has no devices: its device plugin serves the pod)
    calls: list[str] = []
    original = plugin._filter_node

    def counting(s, pod, node):
        calls.append(node.name)
        return original(s, pod, node)

    plugin._filter_node = counting
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {ERN: "2"}}}]}}, validate=False)
    state = CycleState()
    assert plugin.pre_filter(state, pod, list(batch))[1] is None
    verdicts = plugin.filter_vectorized(state, pod, batch)
    got = {batch[i].node().name: _as_tuple(verdicts.status(i)) for i in range(len(batch))}
    failed = (int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("cannot allocate all claims",))
    assert got == {"node-0": None, "node-1": None, "node-2": failed, "node-3": None, "node-4": failed,
                   "node-5": None}
    assert calls == []  # (node-5 serves the resource itself: nothing through DRA, no allocator)
    calls.clear()
    assert plugin.reserve(state, pod, "node-3") is None
    # Reserve's allocation on the chosen node takes the plan's special claim (the node offers none
    # of the resources) straight to the allocator: no per-node Filter
    assert calls == []
    s = state.read("DynamicResources")
    allocation = s.allocations[s.extended_index]
    assert [(r["pool"], r["device"]) for r in allocation["devices"]["results"]] == [("node-3-p", "gpu-0"),
                                                                                   ("node-3-p", "gpu-1")]
    assert s.node_extended["node-3"][0].requests[0].exactly.count == 2


def test_allocator_answers_are_kept_across_cycles_per_shape(monkeypatch):
    """Reserve's allocator search for the special claim (device columns pass the nodes, Reserve
    searches the chosen one) is kept across cycles per (node shape, the claims' requests): a later
    pod on another node of that shape gets the answer relocated to that node without a search; a
    node one of whose devices went in flight has another shape, so it is searched again and gets
    the device still free; another request is another key; a DeviceClass change is another key
    (the class version)."""
    from fastsched.dra import allocator as allocator_module

    searched: list[str] = []
    original = allocator_module._Allocation.run

    def counting(self):
        searched.append(self.node.name)
        return original(self)

    monkeypatch.setattr(allocator_module._Allocation, "run", counting)
    devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": model}}} for j, model in enumerate(MODELS)]
    nodes = [make_node(f"node-{i}") for i in range(4)]
    store, plugin, batch = _gpu_class_cluster(nodes, [_slice(f"node-{i}-s", f"node-{i}", f"node-{i}-p", devices)
                                                      for i in range(4)])

    def place(k: int, node: str, count: int = 1) -> list[tuple[str, str]]:
        pod = Pod.from_manifest({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"p{k}"},
                                 "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                                     "requests": {ERN: str(count)}}}]}}, validate=False)
        state = CycleState()
        assert plugin.pre_filter(state, pod, list(batch))[1] is None
        verdicts = plugin.filter_vectorized(state, pod, batch)
        assert verdicts.status(int(node[-1])) is None
        assert plugin.reserve(state, pod, node) is None  # (stays in flight: its devices held)
        s = state.read("DynamicResources")
        allocation = s.allocations[s.extended_index]
        assert allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
        return [(r["pool"], r["device"]) for r in allocation["devices"]["results"]]

    assert place(0, "node-0") == [("node-0-p", "gpu-0")]
    assert searched == ["node-0"]
    assert place(1, "node-1") == [("node-1-p", "gpu-0")]  # node-1 is node-0's shape before p0
    assert searched == ["node-0"]
    assert place(2, "node-0") == [("node-0-p", "gpu-1")]  # node-0's gpu-0 is held now
    assert searched == ["node-0", "node-0"]
    assert place(3, "node-1") == [("node-1-p", "gpu-1")]  # node-0's shape after p0 was searched
    assert searched == ["node-0", "node-0"]
    assert place(4, "node-2", count=2) == [("node-2-p", "gpu-0"), ("node-2-p", "gpu-1")]
    assert searched == ["node-0", "node-0", "node-2"]
    store.update_object(parse_device_class({"metadata": {"name": "gpu"}, "spec": {
        "extendedResourceName": ERN, "selectors": [
            {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "h100"'}}]}}))
    assert place(5, "node-3") == [("node-3-p", "gpu-1")]  # node-0's first shape, another class
    assert searched == ["node-0", "node-0", "node-2", "node-3"]


@pytest.mark.parametrize("seed", range(40))
def test_number_groups_group_positions_by_value_in_order_of_first_position(seed):
    """``vectorized._number_groups`` (one comparison per value when few, one sort for the rest)
    against a plain grouping: the groups in the order of their first position, each ascending."""
    rng = random.Random(seed)
    n = rng.randint(1, 400)
    values = [rng.getrandbits(40) for _ in range(rng.choice([1, 2, 3, 8, 9, 30, n]))]
    ids = [rng.choice(values) for _ in range(n)]
    expected: dict[int, list[int]] = {}
    for i, v in enumerate(ids):
        expected.setdefault(v, []).append(i)
    got = vectorized._number_groups(np.array(ids, dtype=np.int64))
    assert [g.tolist() for g in got] == list(expected.values())
