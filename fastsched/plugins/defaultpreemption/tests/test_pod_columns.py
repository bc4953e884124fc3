"""PodColumns (the dry run's pod pool) against the pods' own fields.

A bound pod the table keeps as a template record is loaded from its template's prototype, whose
fields are read once per PodColumns (``_template_fields``); a pod with a PodInfo from the PodInfo.
Either way each entry must hold what the pod itself says, in ``table.pods[row]``'s order.
"""
from __future__ import annotations

import random

import numpy as np

from fastsched.plugins.defaultpreemption.util import NOT_STARTED
from fastsched.plugins.defaultpreemption import vectorized
from fastsched.plugins.defaultpreemption.vectorized import PodColumns
from fastsched.sim.generators import PodFactory
from fastsched.snapshot import NodeTable
from fastsched.testing import make_node, make_pod


def _factory(name: str, **kwargs) -> PodFactory:
    return PodFactory(make_pod(name, **kwargs).replace(manifest={}))


def _expected(table: NodeTable, width: int, row: int) -> list[tuple]:
    """(priority, start, requests, (namespace, labels), has host ports) of the row's pods, in order."""
    out = []
    for pi in table.pods[row]:
        pod = pi.pod
        req = np.zeros(width, dtype=np.int64)
        for name, amount in pi.requests.items():
            if amount:
                req[table.resource_index[name]] = amount
        out.append((pod.priority or 0, NOT_STARTED if pod.start_time is None else pod.start_time, req.tolist(),
                    (pod.namespace, dict(pod.labels)), bool(pod.host_ports)))
    return out


def _loaded(cols: PodColumns, row: int) -> list[tuple]:
    a = int(cols.row_start[row])
    return [(int(cols.prio[e]), float(cols.start[e]), cols.req[e].tolist(), cols.signature_keys[int(cols.sig[e])],
             bool(cols.has_ports[e])) for e in range(a, a + int(cols.row_count[row]))]


def test_template_records_and_pod_infos_load_the_pods_own_fields():
    rng = random.Random(5)
    table = NodeTable()
    nodes = [make_node(f"n{i}", cpu="64", memory="64Gi", pods="110") for i in range(8)]
    table.add_nodes(nodes)
    factories = [
        _factory("low", priority=0, requests={"cpu": "900m", "memory": "1Gi"}, labels={"app": "a"}),
        _factory("mid", priority=5, requests={"cpu": "1", "memory": "2Gi"}, labels={"app": "b", "tier": "x"}),
        _factory("high", priority=10, requests={"cpu": "100m"}, namespace="other"),
        _factory("none", priority=3),   # no requests: an all-zero vector
        _factory("port", priority=1, requests={"cpu": "200m"},
                 containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}]),
    ]
    pods = [rng.choice(factories).make(f"p{i}", "default", node_name=f"n{rng.randrange(8)}") for i in range(120)]
    table.add_pods(pods)
    for i in range(6):  # pods with PodInfos of their own, one started
        pod = make_pod(f"own{i}", priority=7 + i, requests={"cpu": f"{i + 1}00m"}, node_name=f"n{i}",
                       labels={"own": str(i)})
        if i == 2:
            pod = pod.replace(start_time=123.5)
        table.add_pod(f"n{i}", pod)
    assert any(int(t) >= 0 for t in table.pod_template[:len(pods)])  # template records are there
    table.pods[3]  # one row's PodInfos built: that row loads from them
    width = len(table.resource_names)
    cols = PodColumns(table)
    cols.begin(table)
    rows = np.flatnonzero(table.live).astype(np.int64)
    cols.refresh(table, rows)
    assert cols.live == cols.size == sum(len(table.pod_records(r)) for r in rows.tolist())
    for row in rows.tolist():
        assert _loaded(cols, row) == _expected(table, width, row), row
    # a changed row is loaded again, as a new range; the others stay
    victim = table.pods[5][0].pod
    table.remove_pod("n5", victim)
    before = {r: int(cols.row_start[r]) for r in rows.tolist()}
    cols.refresh(table, rows)
    assert int(cols.row_start[5]) != before[5] and all(int(cols.row_start[r]) == before[r] for r in before if r != 5)
    for row in rows.tolist():
        assert _loaded(cols, row) == _expected(table, width, row), row


def _random_table(seed: int) -> NodeTable:
    """Nodes holding template records, records whose PodInfo was built, rows whose PodInfo list
    was built and pods with PodInfos of their own (some started)."""
    rng = random.Random(seed)
    table = NodeTable()
    n_nodes = rng.randrange(3, 40)
    table.add_nodes([make_node(f"n{i}", cpu="64", memory="64Gi", pods="110") for i in range(n_nodes)])
    factories = [
        _factory("low", priority=0, requests={"cpu": "900m", "memory": "1Gi"}, labels={"app": "a"}),
        _factory("mid", priority=5, requests={"cpu": "1", "memory": "2Gi"}, labels={"app": "b", "tier": "x"}),
        _factory("high", priority=10, requests={"cpu": "100m"}, namespace="other"),
        _factory("none", priority=3),
        _factory("port", priority=1, requests={"cpu": "200m"},
                 containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}]),
    ]
    kinds = rng.sample(factories, rng.randrange(1, len(factories) + 1))
    pods = [rng.choice(kinds).make(f"p{i}", "default", node_name=f"n{rng.randrange(n_nodes)}")
            for i in range(rng.randrange(0, 300))]
    table.add_pods(pods)
    for i in range(rng.randrange(0, 8)):
        pod = make_pod(f"own{i}", priority=rng.randrange(-3, 12), requests={"cpu": f"{i + 1}00m"},
                       node_name=f"n{rng.randrange(n_nodes)}", labels={"own": str(i % 3)})
        if rng.random() < 0.4:
            pod = pod.replace(start_time=float(rng.randrange(100)))
        table.add_pod(pod.node_name, pod)
    recs = [rec for r in range(n_nodes) for rec in table.pod_records(r)]
    for rec in rng.sample(recs, min(len(recs), rng.randrange(0, 12))):
        table.pod_info(rec)  # a record whose PodInfo is built (its row's list is not)
    for r in rng.sample(range(n_nodes), rng.randrange(0, 3)):
        table.pods[r]  # a row whose PodInfo list is built
    return table


def _columns(table: NodeTable, bulk_records: int, monkeypatch, assumed) -> PodColumns:
    monkeypatch.setattr(vectorized, "_BULK_RECORDS", bulk_records)
    cols = PodColumns(table)
    cols.begin(table)
    cols.refresh(table, np.flatnonzero(table.live).astype(np.int64), assumed)
    return cols


def test_bulk_and_entry_by_entry_loads_agree(monkeypatch):
    """_load_bulk (NumPy gathers per template) writes every column as _load_entries does."""
    for seed in range(40):
        table = _random_table(seed)
        assumed = (lambda pod: pod.name.endswith(("1", "4"))) if seed % 2 else None
        bulk = _columns(table, 0, monkeypatch, assumed)
        one_by_one = _columns(table, 1 << 60, monkeypatch, assumed)
        n = one_by_one.size
        assert bulk.size == n and bulk.live == one_by_one.live, seed
        for name in ("row_start", "row_count", "row_version"):
            assert np.array_equal(getattr(bulk, name), getattr(one_by_one, name)), (seed, name)
        for name in ("prio", "start", "req", "has_ports", "volatile", "rec"):
            assert np.array_equal(getattr(bulk, name)[:n], getattr(one_by_one, name)[:n]), (seed, name)
        # signature ids are numbered in the order each load meets them: the same keys per entry
        assert ([bulk.signature_keys[s] for s in bulk.sig[:n].tolist()]
                == [one_by_one.signature_keys[s] for s in one_by_one.sig[:n].tolist()]), seed
        assert all(a is b for a, b in zip(bulk.pinfo[:n], one_by_one.pinfo[:n])), seed
        assert all(a is b for a, b in zip(bulk.pods[:n], one_by_one.pods[:n])), seed
        width = len(table.resource_names)
        for row in np.flatnonzero(table.live).tolist():
            assert _loaded(bulk, row) == _expected(table, width, row), (seed, row)


def _row_by_row(table: NodeTable, scalar_entries: int, monkeypatch, assumed, order: list[int]) -> PodColumns:
    """Columns loaded a row per refresh in ``order`` (each row's entries written element by element
    when ``scalar_entries`` allows, else a column at a time), then the changed rows reloaded."""
    monkeypatch.setattr(vectorized, "_BULK_RECORDS", 1 << 60)
    monkeypatch.setattr(vectorized, "_SCALAR_ENTRIES", scalar_entries)
    cols = PodColumns(table)
    cols.begin(table)
    for row in order:
        cols.refresh(table, np.array([row], dtype=np.int64), assumed)
    return cols


def test_element_and_column_writes_of_small_loads_agree(monkeypatch):
    """_load_entries' element-by-element writes (a few entries) fill every column as its
    column-at-a-time writes do, rows loaded one by one (most of a dry run's loads), also after
    a row changed and came back as a new range."""
    for seed in range(40):
        table = _random_table(seed)
        rng = random.Random(seed)
        order = np.flatnonzero(table.live).tolist()
        rng.shuffle(order)
        assumed = (lambda pod: pod.name.endswith(("2", "7"))) if seed % 2 else None
        pools = []
        for scalar_entries in (1 << 60, -1):
            cols = _row_by_row(table, scalar_entries, monkeypatch, assumed, order)
            pools.append(cols)
        for row in order[:3]:  # a victim leaves: its row reloads (1 pod less) on the next refresh
            if table.pods.built(row) is None and len(table.pod_records(row)):
                victim = table.pod_info(table.pod_records(row)[0]).pod
                table.remove_pod(victim.node_name, victim)
        for cols, scalar_entries in zip(pools, (1 << 60, -1)):
            monkeypatch.setattr(vectorized, "_SCALAR_ENTRIES", scalar_entries)
            cols.refresh(table, np.flatnonzero(table.live).astype(np.int64), assumed)
        elements, columns = pools
        n = columns.size
        assert elements.size == n and elements.live == columns.live, seed
        for name in ("row_start", "row_count", "row_version"):
            assert np.array_equal(getattr(elements, name), getattr(columns, name)), (seed, name)
        for name in ("prio", "start", "req", "sig", "has_ports", "volatile", "rec"):
            assert np.array_equal(getattr(elements, name)[:n], getattr(columns, name)[:n]), (seed, name)
        assert elements.signature_keys == columns.signature_keys, seed
        assert all(a is b for a, b in zip(elements.pinfo[:n], columns.pinfo[:n])), seed
        assert all(a is b for a, b in zip(elements.pods[:n], columns.pods[:n])), seed
        width = len(table.resource_names)
        for row in np.flatnonzero(table.live).tolist():
            assert _loaded(elements, row) == _expected(table, width, row), (seed, row)


def test_many_rows_load_as_row_by_row(monkeypatch):
    """_load_many_rows (the records of many rows in one compiled pass, the built rows' lists read
    row by row, the ranges written a column at a time) fills the pool as the row-by-row loop:
    every column, in a shuffled row order, with the bulk gathers or entry by entry, and again after
    a row changed (a reload of the changed rows)."""
    ran = []
    real = PodColumns._load_many_rows
    monkeypatch.setattr(PodColumns, "_load_many_rows", lambda self, *a: ran.append(1) or real(self, *a))
    for seed in range(30):
        table = _random_table(seed)
        rng = random.Random(seed)
        rows = np.flatnonzero(table.live).astype(np.int64)
        rng.shuffle(rows)
        assumed = (lambda pod: pod.name.endswith(("1", "4"))) if seed % 2 else None
        loaded = {}
        for many in (True, False):
            monkeypatch.setattr(vectorized, "_MANY_ROWS", 1 if many else 1 << 60)
            monkeypatch.setattr(vectorized, "_BULK_RECORDS", (0, 1 << 60)[seed % 2])
            cols = PodColumns(table)
            cols.begin(table)
            cols.refresh(table, rows, assumed)
            loaded[many] = cols
        a, b = loaded[True], loaded[False]
        n = b.size
        assert a.size == n and a.live == b.live, seed
        for name in ("row_start", "row_count", "row_version"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (seed, name)
        for name in ("prio", "start", "req", "has_ports", "volatile", "rec"):
            assert np.array_equal(getattr(a, name)[:n], getattr(b, name)[:n]), (seed, name)
        assert ([a.signature_keys[s] for s in a.sig[:n].tolist()]
                == [b.signature_keys[s] for s in b.sig[:n].tolist()]), seed
        assert all(x is y for x, y in zip(a.pinfo[:n], b.pinfo[:n])), seed
        assert all(x is y for x, y in zip(a.pods[:n], b.pods[:n])), seed
        width = len(table.resource_names)
        for row in rows.tolist():
            assert _loaded(a, row) == _expected(table, width, row), (seed, row)
        # rows changed since: the reload takes the new records (both loads' columns stay current)
        changed = [r for r in rows.tolist() if table.pods[r]][:3]
        for r in changed:
            table.remove_pod(table.node_names[r], table.pods[r][0].pod)
        monkeypatch.setattr(vectorized, "_MANY_ROWS", 1)
        a.refresh(table, rows, assumed)
        for row in rows.tolist():
            assert _loaded(a, row) == _expected(table, width, row), (seed, row)
    assert len(ran) >= 30
