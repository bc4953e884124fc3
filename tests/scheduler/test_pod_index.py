"""``Cluster.get_pod`` reads the namespace/name index, and answers what a scan of every pod answers:
pods added one by one, bound pods added in bulk (kept as the cache's columns), terminal pods,
deleted and re-added pods, on a seeded random history."""
import random

import pytest

from fastsched import Scheduler
from fastsched.testing import make_node, pod_manifest


def _scan(s: Scheduler, namespace: str, name: str):
    for p in s.cluster.pods.values():
        if p.namespace == namespace and p.name == name:
            return p
    return None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_get_pod_agrees_with_a_scan_of_every_pod(seed):
    rng = random.Random(seed)
    s = Scheduler(seed=seed)
    s.add_nodes([make_node(f"n{i}", cpu="64", memory="64Gi") for i in range(4)])
    namespaces = ["default", "a", "b"]
    names: list[tuple[str, str]] = []
    for step in range(6):
        batch = []
        for i in range(rng.randrange(1, 40)):
            ns, name = rng.choice(namespaces), f"p{step}-{i}"
            kind = rng.random()
            if kind < 0.5:
                m = pod_manifest(name, ns, cpu="10m", node_name=f"n{rng.randrange(4)}")  # bound: bulk
            elif kind < 0.6:
                m = pod_manifest(name, ns, cpu="10m", node_name="n0")
                m["status"] = {"phase": "Succeeded"}
            else:
                m = pod_manifest(name, ns, cpu="10m")
            batch.append(m)
            names.append((ns, name))
        s.add_pods(batch)
        if rng.random() < 0.5:
            s.run()
        for ns, name in rng.sample(names, min(5, len(names))):
            pod = s.get_pod(ns, name)
            if pod is not None:
                s.delete_pod(pod)
    probes = names + [("default", "missing"), ("a", names[0][1] + "x"), ("c", names[0][1])]
    for ns, name in probes:
        for other_ns in namespaces:
            assert s.get_pod(other_ns, name) == _scan(s, other_ns, name)  # (bulk pods: equal copies)
    assert any(s.get_pod(ns, name) is not None for ns, name in names)
    assert any(s.get_pod(ns, name) is None for ns, name in names)  # deleted ones


def test_a_key_that_is_no_string_is_in_no_index():
    # the indexes are Mappings over string keys: ``in`` answers False for anything else, with pods
    # kept in bulk too (KeyIndex split the key on "/" and raised AttributeError for an int)
    s = Scheduler()
    s.add_nodes([make_node("n0", cpu="64", memory="64Gi")])
    s.add_pods([pod_manifest(f"p{i}", "default", cpu="10m", node_name="n0") for i in range(3)])  # bound: bulk
    cluster = s.cluster
    pod = s.get_pod("default", "p1")
    assert pod is not None
    assert "default/p1" in cluster._pod_uid_by_key and pod.uid in cluster.pods and pod.uid in cluster._order_of
    assert pod.uid in cluster._pod_uids_by_namespace["default"]
    for key in (42, None, ("default", "p1")):
        assert key not in cluster._pod_uid_by_key
        assert key not in cluster.pods
        assert key not in cluster._order_of
        assert key not in cluster._pod_uids_by_namespace["default"]
