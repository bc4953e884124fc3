"""Cache: assume / forget / confirm / ghost nodes, reflected in the columnar table."""
import pytest

from fastsched.scheduler.cache import Cache, CacheError
from fastsched.testing import make_node, make_pod


def cpu_requested(cache, node):
    t = cache.snapshot.table
    return int(t.requested[t.row_of[node], t.resource_index["cpu"]])


@pytest.fixture
def cache():
    c = Cache()
    c.add_node(make_node("n1"))
    c.add_node(make_node("n2"))
    return c


def test_assume_then_confirm(cache):
    pod = make_pod("p", cpu="1").with_node_name("n1")
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod) and cpu_requested(cache, "n1") == 1000
    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        cache.assume_pod(pod)
    cache.finish_binding(pod)
    cache.add_pod(pod)  # the informer confirms it
    assert not cache.is_assumed_pod(pod) and cpu_requested(cache, "n1") == 1000
    with pytest.raises(CacheError, match="already in added state"):
        cache.add_pod(pod)


def test_forget_releases_resources(cache):
    pod = make_pod("p", cpu="1").with_node_name("n1")
    cache.assume_pod(pod)
    cache.forget_pod(pod)
    assert cpu_requested(cache, "n1") == 0 and cache.get_pod(pod) is None
    cache.forget_pod(pod)  # forgetting an unknown pod is a no-op


def test_forget_a_confirmed_pod_is_an_error(cache):
    pod = make_pod("p", cpu="1").with_node_name("n1")
    cache.add_pod(pod)
    with pytest.raises(CacheError, match="is not assumed"):
        cache.forget_pod(pod)


def test_confirm_on_another_node_moves_the_pod(cache):
    pod = make_pod("p", cpu="1")
    cache.assume_pod(pod.with_node_name("n1"))
    cache.add_pod(pod.with_node_name("n2"))
    assert cpu_requested(cache, "n1") == 0 and cpu_requested(cache, "n2") == 1000


def test_update_and_remove(cache):
    pod = make_pod("p", cpu="1").with_node_name("n1")
    cache.add_pod(pod)
    bigger = make_pod("p", cpu="3").with_node_name("n1")
    cache.update_pod(pod, bigger)
    assert cpu_requested(cache, "n1") == 3000
    cache.remove_pod(bigger)
    assert cpu_requested(cache, "n1") == 0
    with pytest.raises(CacheError, match="not found"):
        cache.remove_pod(bigger)


def test_removed_node_keeps_ghost_pods_until_it_returns(cache):
    pod = make_pod("p", cpu="1").with_node_name("n1")
    cache.add_pod(pod)
    cache.remove_node("n1")
    assert "n1" not in cache.snapshot.table.row_of and cache.get_pod(pod) is not None
    cache.add_node(make_node("n1"))
    assert cpu_requested(cache, "n1") == 1000
    cache.remove_node("n1")
    cache.remove_pod(pod)  # deleting a ghost pod works
    cache.add_node(make_node("n1"))
    assert cpu_requested(cache, "n1") == 0
    with pytest.raises(CacheError, match="not found"):
        cache.remove_node("nope")
