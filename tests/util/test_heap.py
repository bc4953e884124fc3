"""fastsched.util.heap: the C heap's free pages given back after bulk adds."""
import ctypes.util
import platform

import pytest

from fastsched.scheduler import Scheduler
from fastsched.sim.generators import upstream_nodes
from fastsched.sim.workloads import template_pod
from fastsched.util import heap


def test_release_free_heap_on_glibc():
    # glibc (manylinux, Debian, ...) has malloc_trim; elsewhere the call is a no-op that says so
    glibc = platform.libc_ver()[0] == "glibc"
    assert heap.release_free_heap() is glibc
    if not glibc:
        pytest.skip("not glibc: nothing to release")
    assert ctypes.util.find_library("c") is not None


@pytest.fixture
def releases(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "release_free_heap", lambda: calls.append(1) or True)
    monkeypatch.setattr(heap, "RELEASE_AFTER", 3)
    return calls


def test_bulk_adds_release_the_free_heap_after_large_batches(releases):
    s = Scheduler(seed=0)
    nodes = upstream_nodes(5)
    s.add_nodes(nodes[:2])            # below RELEASE_AFTER: nothing
    assert releases == []
    s.add_nodes(nodes[2:])            # 3 nodes: once after the batch
    assert releases == [1]
    pods = [template_pod("pod-default", f"p-{i}").replace(node_name=nodes[i].name, phase="Running") for i in range(5)]
    s.add_pods(pods[:2])
    assert releases == [1]
    s.add_pods(pods[2:])              # 3 bound pods: once more
    assert releases == [1, 1]
    assert len(s.snapshot.table) == 5 and s.cache.pod_count() == 5
