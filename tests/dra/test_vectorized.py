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
from fastsched.plugins.dynamicresources import DynamicResources, vectorized
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
        obj = super().add_object(obj)
        for listener in self.object_listeners:
            listener(obj.KIND, None, obj)
        return obj

    def update_object(self, obj):
        old = self.get_object(obj.KIND, obj.name, obj.namespace)
        super().update_object(obj)
        for listener in self.object_listeners:
            listener(obj.KIND, old, obj)

    def delete_object(self, kind, name, namespace="default"):
        old = self.get_object(kind, name, namespace)
        super().delete_object(kind, name, namespace)
        for listener in self.object_listeners:
            listener(kind, old, None)


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


def _pod_with_claims(rng, store, nodes, seed, k, allocated=True):
    """Pod ``p<k>`` with one or two new random claims (added to ``store``); ``allocated=False``
    drops the claims' allocations."""
    claims = [random_claim(rng, f"c{seed}-{k}-{j}", nodes) for j in range(rng.choice([1, 1, 2]))]
    for c in claims:
        if not allocated:
            c.pop("status", None)
        store.add_object(parse_resource_claim(c))
    return Pod.from_manifest({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"p{seed}-{k}"},
                              "spec": {"containers": [{"name": "c", "image": "x"}],
                                       "resourceClaims": [{"name": f"e{j}", "resourceClaimName": c["metadata"]["name"]}
                                                          for j, c in enumerate(claims)]}}, validate=False)


def _statuses_per_node(plugin, state, pod, batch):
    return [plugin.filter(state, pod, info) for info in batch]


def _as_tuple(status):
    return None if status is None else (int(status.code()), tuple(status.reasons()))


def _pre_filtered_pair(plugin, pod, batch):
    """Two cycle states through PreFilter for ``pod`` (one for the batch Filter, one for the path
    compared with it), which must answer alike; ``None`` when PreFilter stops the pod."""
    state_a, state_b = CycleState(), CycleState()
    _, pre_a = plugin.pre_filter(state_a, pod, list(batch))
    _, pre_b = plugin.pre_filter(state_b, pod, list(batch))
    assert _as_tuple(pre_a) == _as_tuple(pre_b)
    return None if pre_a is not None else (state_a, state_b)


@pytest.mark.parametrize("seed", range(40))
def test_batch_filter_agrees_with_per_node_filter(seed):
    rng = random.Random(seed)
    nodes, objects = random_cluster(rng, rng.randint(5, 40))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot(nodes).batch()
    exact_checked = 0
    for k in range(25):
        pod = _pod_with_claims(rng, store, nodes, seed, k)
        states = _pre_filtered_pair(plugin, pod, batch)
        if states is None:
            continue
        state_a, state_b = states
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


def shaped_cluster(rng: random.Random, n_nodes: int, n_shapes: int):
    """Nodes cloned from ``n_shapes`` templates (the same devices, their own node, pool and slice
    names): the allocator's node shapes (dra.allocator.NodeShapes) answer most of them from one
    search; some devices of some nodes held by allocated claims."""
    template_nodes, template_objects = random_cluster(rng, n_shapes)
    templates = [[o for o in template_objects if getattr(o, "KIND", "") == "ResourceSlice"
                  and o.node_name == n.name and o.resource_slice_count == 1] for n in template_nodes]
    objects = [o for o in template_objects if getattr(o, "KIND", "") == "DeviceClass"]
    nodes = [make_node(f"node-{i}") for i in range(n_nodes)]
    held = 0
    for i in range(n_nodes):
        for s in templates[i % n_shapes]:
            pool = f"node-{i}-{s.pool_name.split('-', 2)[2]}"
            devices = [{"name": d.name, "attributes": {k: {a.kind: a.value} for k, a in d.attributes.items()},
                        "capacity": {k: {"value": str(q)} for k, q in d.capacity.items()}} for d in s.devices]
            objects.append(parse_resource_slice({"metadata": {"name": pool}, "spec": {
                "driver": DRIVER, "nodeName": f"node-{i}",
                "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}))
            for d in s.devices:
                if rng.random() < 0.1:
                    objects.append(parse_resource_claim({
                        "metadata": {"name": f"taken-{held}", "namespace": "default", "uid": f"taken-{held}"},
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                        "status": {"allocation": {
                            "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": pool, "device": d.name}]},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [f"node-{i}"]}]}]}},
                            "reservedFor": [{"resource": "pods", "name": "x", "uid": f"x{held}"}]}}))
                    held += 1
    return nodes, objects


@pytest.mark.parametrize("seed", range(30))
def test_nodes_of_one_shape_filter_and_reserve_as_searched_one_by_one(seed):
    """The batch Filter over nodes of a few shapes (one allocator search per shape) against the
    per-node Filter with the shapes turned off; Reserve on every feasible node gets the allocation
    of that node's own search (its pools, its node selector)."""
    rng = random.Random(1000 + seed)
    nodes, objects = shaped_cluster(rng, rng.randint(8, 30), rng.randint(1, 3))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot(nodes).batch()
    per_node_cycles = fewer_searches = 0
    for k in range(12):
        # (no allocated claim: nothing restricts the nodes per node)
        pod = _pod_with_claims(rng, store, nodes, seed, k, allocated=False)
        state_a, state_b = CycleState(), CycleState()
        _, pre_a = plugin.pre_filter(state_a, pod, list(batch))
        _, pre_b = plugin.pre_filter(state_b, pod, list(batch))
        if pre_a is not None:
            continue
        sb = state_b.read("DynamicResources")
        sb.allocator.shapes = None  # every node searched on its own
        sa = state_a.read("DynamicResources")
        searches = sa.allocator.num_allocate_one_invocations
        verdicts = plugin.filter_vectorized(state_a, pod, batch)
        got = [_as_tuple(verdicts.status(i)) for i in range(len(batch))]
        want = [_as_tuple(s) for s in _statuses_per_node(plugin, state_b, pod, batch)]
        assert got == want, (seed, k)
        if sa.vector is False and sb.allocator.num_allocate_one_invocations:  # the per-node path ran
            keys = [sa.allocator.shapes.key(info.node(), sa.allocator.slices_for_node(info.node()),
                                            sa.allocator.allocated_devices) for info in batch]
            if len({k[0] for k in keys if k is not None}) < sum(k is not None for k in keys):
                per_node_cycles += 1  # two nodes of one shape: searched once
                fewer_searches += (sa.allocator.num_allocate_one_invocations - searches
                                   < sb.allocator.num_allocate_one_invocations)
        for i, status in enumerate(want):
            if status is not None:
                continue
            node = batch[i].node().name
            assert plugin.reserve(state_a, pod, node) is None
            assert [sa.allocations[j] for j in sa.to_allocate] == sb.node_allocations.get(node, []), (seed, k, node)
            plugin.unreserve(state_a, pod, node)
    assert fewer_searches == per_node_cycles


def test_device_columns_follow_held_devices_across_matrix_growth():
    """``DeviceColumns`` keeps its columns as rows of one matrix (a held or freed device changes
    every column counting it in one indexed add). With 20 signatures built in three rounds (the
    matrix grows past 8 and 16 rows, columns built after a device's first change included) and
    devices held and freed in between, every column equals a fresh build over the same held state."""
    rng = random.Random(20261130)
    nodes, objects = random_cluster(rng, 12)
    models = [f'device.attributes["{DRIVER}"].model == "{m}"' for m in MODELS]
    objects += [parse_device_class({"metadata": {"name": f"c{i}"}, "spec": {"selectors": [
        {"cel": {"expression": models[i % 3]}}] if i % 4 else []}}) for i in range(10)]
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    table = build_snapshot(nodes).batch().table
    cols = vectorized._columns(plugin, table)
    assert cols is not None
    manager = plugin.manager
    signatures = [(f"c{i}", sel) for i in range(10) for sel in ((), (models[i % 3 - 1],))]
    devices = [(s.driver, s.pool_name, d.name) for s in store.list_objects("ResourceSlice") for d in s.devices]
    held: list = []
    for lo, hi in ((0, 5), (5, 13), (13, 20)):
        for signature in signatures[lo:hi]:
            assert cols.column(signature) is not None
        for _ in range(12):
            if held and rng.random() < 0.4:
                device = held.pop(rng.randrange(len(held)))
                manager._hold([device], -1)
            else:
                device = rng.choice(devices)
                held.append(device)
                manager._hold([device], 1)
            fresh = vectorized.DeviceColumns(manager, table, cols.key, plugin.features)
            for signature in signatures[:hi]:
                assert cols.column(signature).tolist() == fresh.column(signature).tolist(), (signature, hi)
                for needed in (1, 2):
                    # the kept ``free >= needed`` masks follow the devices as the columns do
                    assert cols.enough(signature, needed).tolist() == (fresh.column(signature) >= needed).tolist()
            fresh.close()
    assert any(cols.column(s).any() for s in signatures)
    # signatures counting the same devices share one matrix row, the others have their own
    distinct = {frozenset(cols.rows_of[s].items()) for s in signatures}
    assert 1 < len(distinct) < len(signatures)
    assert cols.rows_used == len(distinct) == len(set(cols.index.values()))
    for a in signatures:
        for b in signatures:
            assert (cols.index[a] == cols.index[b]) == (cols.rows_of[a] == cols.rows_of[b]), (a, b)


def test_device_columns_of_distinct_devices_grow_the_matrix():
    """Twenty signatures over nested device sets (one device per node, ``idx <= j``) take a matrix
    row each: the matrix grows past 8 and 16 rows, columns built after a device's first change
    included, and every column and kept ``free >= needed`` mask equals a fresh build's."""
    rng = random.Random(20261202)
    nodes = [make_node(f"node-{i}") for i in range(20)]
    objects = [parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})]
    for i in range(20):
        objects.append(parse_resource_slice({"metadata": {"name": f"node-{i}-pool"}, "spec": {
            "driver": DRIVER, "nodeName": f"node-{i}",
            "pool": {"name": f"node-{i}-pool", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{j}", "attributes": {"idx": {"int": i}}} for j in range(2)]}}))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    table = build_snapshot(nodes).batch().table
    cols = vectorized._columns(plugin, table)
    assert cols is not None
    manager = plugin.manager
    signatures = [("gpu", (f'device.attributes["{DRIVER}"].idx <= {j}',)) for j in range(20)]
    # and sets of one size (a node's two devices each): equal in length, not in devices
    signatures += [("gpu", (f'device.attributes["{DRIVER}"].idx == {j}',)) for j in (3, 7, 11)]
    rng.shuffle(signatures)
    counted = {sig: (lambda i, j=int(sig[1][0].split()[-1]), eq="==" in sig[1][0]: (i == j) if eq else (i <= j))
               for sig in signatures}
    devices = [(s.driver, s.pool_name, d.name) for s in store.list_objects("ResourceSlice") for d in s.devices]
    held: list = []
    for lo, hi in ((0, 7), (7, 15), (15, 23)):
        for signature in signatures[lo:hi]:
            assert cols.column(signature) is not None
            assert cols.enough(signature, 2) is not None
        for _ in range(12):
            if held and rng.random() < 0.4:
                manager._hold([held.pop(rng.randrange(len(held)))], -1)
            else:
                device = rng.choice([d for d in devices if d not in held])
                held.append(device)
                manager._hold([device], 1)
            fresh = vectorized.DeviceColumns(manager, table, cols.key, plugin.features)
            for signature in signatures[:hi]:
                assert cols.column(signature).tolist() == fresh.column(signature).tolist(), (signature, hi)
                # counted by hand: node i's two devices, less those held, where the selector takes i
                want = [counted[signature](i) * sum((DRIVER, f"node-{i}-pool", f"gpu-{j}") not in held
                                                    for j in range(2)) for i in range(20)]
                assert [int(cols.column(signature)[table.row_of[f"node-{i}"]]) for i in range(20)] == want
                enough = cols.enough(signature, 2)
                assert [bool(enough[table.row_of[f"node-{i}"]]) for i in range(20)] == [w >= 2 for w in want]
            fresh.close()
    assert cols.rows_used == 23 and len(cols.matrix) >= 23


def test_same_shape_nodes_do_not_share_a_verdict_naming_the_node_s_own_devices():
    """Nodes of one shape share a verdict only when it is the allocator's plain "cannot allocate
    all claims" or a node-local answer: a selector failing at run time names the device's pool,
    which is the node's own, so each node gets its own Filter (its own message)."""
    devices = [{"name": f"gpu-{j}", "attributes": {"model": {"string": "a100"}}} for j in range(2)]
    objects = [parse_device_class({"metadata": {"name": "gpu"},
                                   "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})]
    nodes = [make_node(f"node-{i}") for i in range(4)]
    for i in range(4):
        objects.append(parse_resource_slice({"metadata": {"name": f"node-{i}-pool"}, "spec": {
            "driver": DRIVER, "nodeName": f"node-{i}",
            "pool": {"name": f"node-{i}-pool", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}))
    # (no "numa" attribute on these devices: the selector fails on the first device it reads)
    objects.append(parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "c"}, "spec": {
        "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "selectors": [
            {"cel": {"expression": f'device.attributes["{DRIVER}"].numa == 1'}}]}}]}}}))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    batch = build_snapshot(nodes).batch()
    pod = Pod.from_manifest({"metadata": {"name": "p", "namespace": "default", "uid": "p"},
                             "spec": {"containers": [{"name": "c", "image": "x"}],
                                      "resourceClaims": [{"name": "e", "resourceClaimName": "c"}]}}, validate=False)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, list(batch))
    assert pre is None
    verdicts = plugin.filter_vectorized(state, pod, batch)
    got = [_as_tuple(verdicts.status(i)) for i in range(len(batch))]
    state_b = CycleState()
    plugin.pre_filter(state_b, pod, list(batch))
    state_b.read("DynamicResources").allocator.shapes = None
    want = [_as_tuple(s) for s in _statuses_per_node(plugin, state_b, pod, batch)]
    assert got == want
    assert all(status is not None and f"node-{i}-pool" in " ".join(status[1]) for i, status in enumerate(got)), got


def test_a_plan_keeps_the_enough_mask_of_its_first_filter_call():
    """``_enough`` keeps on the plan what the columns said at the cycle's first Filter call (the
    per-cycle answer it always was): a device held afterwards changes the columns' kept mask, not
    the plan's."""
    nodes = [make_node(f"node-{i}") for i in range(3)]
    objects = [parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})]
    for i in range(3):
        objects.append(parse_resource_slice({"metadata": {"name": f"node-{i}-pool"}, "spec": {
            "driver": DRIVER, "nodeName": f"node-{i}",
            "pool": {"name": f"node-{i}-pool", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}]}}))
    store = ListeningStore(objects)
    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
    table = build_snapshot(nodes).batch().table
    cols = vectorized._columns(plugin, table)
    plan = vectorized._Plan({("gpu", ()): 1}, True)
    rows = [table.row_of[f"node-{i}"] for i in range(3)]
    assert vectorized._enough(plan, cols, table)[rows].tolist() == [True] * 3
    plugin.manager._hold([(DRIVER, "node-1-pool", "gpu-0")], 1)
    assert vectorized._enough(plan, cols, table)[rows].tolist() == [True] * 3
    assert cols.enough(("gpu", ()), 1)[table.row_of["node-1"]] == False  # noqa: E712


def test_special_claim_plans_read_each_requests_object_once():
    """``_special_plan`` keeps what a plan reads of a special claim per requests object (the pods
    sharing their containers share it): claims with the same requests object share the needs;
    another requests object, with another count or a request the columns cannot decide, gets its
    own answer, equal to ``_needs`` of the claim."""
    def claim(count, admin=False):
        exactly = {"deviceClassName": "gpu", "count": count, **({"adminAccess": True} if admin else {})}
        return parse_resource_claim({"metadata": {"name": "c", "namespace": "default"},
                                     "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})

    plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=ListeningStore([])))
    s = SimpleNamespace(to_allocate=[0], extended_index=0, reused=False, after_reserve=None, available_on_nodes=[None],
                        binding_failed=set(), needs_node_operations=set(), pod_scalar_resources={"example.com/gpu": 1})
    answer = {}
    plugin._filter_extended_resources = lambda state, node: (answer["claim"], [], None)
    one = claim(1)
    answer["claim"] = one
    first = vectorized._special_plan(plugin, s)
    answer["claim"] = one.replace(name="d")  # another claim, the same requests object
    second = vectorized._special_plan(plugin, s)
    assert first.needs == {("gpu", ()): 1} and second.needs is first.needs and first.sufficient
    for other in (claim(1), claim(3)):
        answer["claim"] = other
        plan = vectorized._special_plan(plugin, s)
        assert plan.needs == vectorized._needs([other])[0] == {("gpu", ()): other.requests[0].exactly.count}
    answer["claim"] = claim(1, admin=True)
    assert vectorized._special_plan(plugin, s) is None and vectorized._needs([answer["claim"]]) is None
    s.binding_failed = {0}  # per state: the kept needs, this state's sufficiency
    answer["claim"] = one
    assert vectorized._special_plan(plugin, s).needs is first.needs and not vectorized._special_plan(plugin, s).sufficient


def test_a_group_shares_another_node_s_kept_answer_as_searched_one_by_one(monkeypatch):
    """Allocations kept in flight across cycles move nodes to other shapes, so a group's first
    node in a later cycle gets the allocator's kept answer of a node searched in an earlier cycle
    (a SameShapeAnswer naming that node and its pools); the group shares it as found there
    (``_by_shape``). Every member Reserve may pick must get its own search's allocation (its pools,
    its node selector), as the per-node Filter with shapes off finds it. Seeded clusters of a few
    shapes; each pod asks what the first pod asked (the kept answers' key), with a constraint, so
    the columns alone never decide."""
    import copy

    made = []

    def recording(answer, first_node, first_pools):
        made.append((type(answer) is vectorized.SameShapeAnswer, first_node))
        return GroupAnswer(answer, first_node, first_pools)

    from fastsched.dra.allocator import GroupAnswer
    monkeypatch.setattr(vectorized, "GroupAnswer", recording)
    shared_kept = compared = 0
    for seed in range(25):
        rng = random.Random(5200 + seed)
        nodes, objects = shaped_cluster(rng, rng.randint(6, 20), rng.randint(1, 2))
        store = ListeningStore(objects)
        plugin = DynamicResources(DynamicResourcesArgs(), SimpleNamespace(client=store))
        batch = build_snapshot(nodes).batch()
        spec = random_claim(rng, "spec", nodes)
        spec.pop("status", None)
        spec["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/numa"}]
        kept: list[tuple] = []
        for k in range(10):
            claim = copy.deepcopy(spec)
            claim["metadata"].update(name=f"c{seed}-{k}", uid=f"c{seed}-{k}")
            store.add_object(parse_resource_claim(claim))
            pod = Pod.from_manifest({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"p{seed}-{k}"},
                                     "spec": {"containers": [{"name": "c", "image": "x"}],
                                              "resourceClaims": [{"name": "e0", "resourceClaimName": f"c{seed}-{k}"}]}},
                                    validate=False)
            states = _pre_filtered_pair(plugin, pod, batch)
            if states is None:
                continue
            state_a, state_b = states
            sa, sb = state_a.read("DynamicResources"), state_b.read("DynamicResources")
            sb.allocator.shapes = None  # every node searched on its own
            del made[:]
            verdicts = plugin.filter_vectorized(state_a, pod, batch)
            shared_kept += sum(kept_answer for kept_answer, _ in made)
            got = [_as_tuple(verdicts.status(i)) for i in range(len(batch))]
            want = [_as_tuple(s) for s in _statuses_per_node(plugin, state_b, pod, batch)]
            assert got == want, (seed, k)
            feasible = [batch[i].node().name for i, s in enumerate(want) if s is None]
            for node in feasible:
                assert plugin.reserve(state_a, pod, node) is None
                assert [sa.allocations[j] for j in sa.to_allocate] == sb.node_allocations[node], (seed, k, node)
                compared += 1
                plugin.unreserve(state_a, pod, node)
            if feasible:
                # the first feasible node keeps this pod's devices in flight: the next cycle's
                # group of its old shape starts at another node
                if plugin.reserve(state_a, pod, feasible[0]) is None:
                    kept.append((state_a, pod, feasible[0]))
            if kept and rng.random() < 0.2:
                plugin.unreserve(*kept.pop(rng.randrange(len(kept))))
    assert shared_kept > 0 and compared > 0
