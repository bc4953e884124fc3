"""The snapshot's mutation session (upstream ``StartMutations``/``AddPod``/``RemovePod``/
``EndMutations``), over the cache's node table: exact restore of each touched node's pods and
their order, bulk pods kept valid, upstream's errors."""
from __future__ import annotations

import pytest

from fastsched.scheduler.cache import Cache
from fastsched.scheduler.mutable_snapshot import MutableSnapshot, SnapshotMutationError
from fastsched.testing import make_node, make_pod


def cluster(bulk: bool):
    cache = Cache()
    cache.add_node(make_node("n1", cpu="8"))
    cache.add_node(make_node("n2", cpu="8"))
    pods = [make_pod(f"p{i}", cpu="1").replace(uid=f"u{i}").with_node_name("n1" if i < 4 else "n2") for i in range(6)]
    if bulk:
        cache.add_pods(pods)
    else:
        for pod in pods:
            cache.add_pod(pod)
    return cache, pods


def layout(cache):
    table = cache.snapshot.table
    return {name: [pi.pod.uid for pi in table.pods[row]] for name, row in table.row_of.items()}


def requested(cache, node):
    return int(cache.snapshot.get(node).requested.milli_cpu)


@pytest.mark.parametrize("bulk", [False, True])
def test_end_mutations_restores_pods_and_order(bulk):
    cache, pods = cluster(bulk)
    before, cpu = layout(cache), requested(cache, "n1")
    ms = MutableSnapshot(cache)
    ms.start_mutations()
    removed = [ms.remove_pod(pods[i], "n1") for i in (0, 2)]
    assert [u for u in layout(cache)["n1"]] == ["u3", "u1"]  # the last pod moves into the gap
    assert requested(cache, "n1") == cpu - 2000
    ms.add_pod(removed[1], "n1")
    assumed = make_pod("new", cpu="1").replace(uid="new").with_node_name("n2")
    ms.add_pod(assumed, "n2")
    ms.remove_pod(assumed, "n2")
    ms.end_mutations()
    assert layout(cache) == before and requested(cache, "n1") == cpu
    # the cache still works on its pods afterwards (bulk entries detached from their records)
    cache.remove_pod(pods[2])
    cache.remove_pod(pods[0])
    assert layout(cache)["n1"] == ["u3", "u1"]
    assert cache.get_pod(pods[1]) is not None and cache.get_pod(pods[0]) is None


def test_mutation_errors():
    cache, pods = cluster(False)
    ms = MutableSnapshot(cache)
    with pytest.raises(SnapshotMutationError, match=r"RemovePod\(\) called outside of mutation session"):
        ms.remove_pod(pods[0], "n1")
    with pytest.raises(SnapshotMutationError, match=r"AddPod\(\) called outside of mutation session"):
        ms.add_pod(pods[0], "n1")
    with pytest.raises(SnapshotMutationError, match="no mutation session started"):
        ms.end_mutations()
    ms.start_mutations()
    with pytest.raises(SnapshotMutationError, match="cannot stack mutations"):
        ms.start_mutations()
    with pytest.raises(SnapshotMutationError, match='node "nx" not found in the snapshot'):
        ms.remove_pod(pods[0], "nx")
    with pytest.raises(SnapshotMutationError, match="is not on node n2"):
        ms.remove_pod(pods[0], "n2")
    ms.end_mutations()
