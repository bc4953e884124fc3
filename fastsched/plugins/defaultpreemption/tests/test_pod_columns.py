"""PodColumns (the dry run's pod pool) against the pods' own fields.

A bound pod the table keeps as a template record is loaded from its template's prototype, whose
fields are read once per PodColumns (``_template_fields``); a pod with a PodInfo from the PodInfo.
Either way each entry must hold what the pod itself says, in ``table.pods[row]``'s order.
"""
from __future__ import annotations

import random

import numpy as np

from fastsched.plugins.defaultpreemption.util import NOT_STARTED
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
