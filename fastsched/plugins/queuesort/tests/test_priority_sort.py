"""PrioritySort: upstream's Less (priority first, then queue timestamp)."""
from __future__ import annotations

import functools

import pytest

from fastsched.api import Pod
from fastsched.framework.interface import QueueSortPlugin
from fastsched.framework.types import PodInfo, QueuedPodInfo
from fastsched.plugins import in_tree_registry
from fastsched.plugins.queuesort import NAME, PrioritySort, new
from fastsched.runtime.framework import new_framework
from fastsched.testing import single_plugin_profile


def qpi(name: str, priority: int | None, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(Pod(name=name, priority=priority)), timestamp=timestamp)


# Upstream priority_sort_test.go cases, plus unset priorities (PodPriority reads them as 0).
@pytest.mark.parametrize("a,b,want", [
    (qpi("p1", 100, 1.0), qpi("p2", 50, 1.0), True),       # p1's priority greater than p2
    (qpi("p1", 50, 1.0), qpi("p2", 100, 1.0), False),      # p1's priority less than p2
    (qpi("p1", 100, 1.0), qpi("p2", 100, 2.0), True),      # equal priority, p1 added earlier
    (qpi("p1", 100, 2.0), qpi("p2", 100, 1.0), False),     # equal priority, p2 added earlier
    (qpi("p1", 100, 1.0), qpi("p2", 100, 1.0), False),     # equal priority and timestamp
    (qpi("p1", None, 1.0), qpi("p2", 0, 2.0), True),       # unset == 0, earlier first
    (qpi("p1", None, 1.0), qpi("p2", -1, 0.0), True),      # unset (0) beats negative priority
    (qpi("p1", -5, 0.0), qpi("p2", None, 9.0), False),
])
def test_less(a, b, want):
    assert PrioritySort().less(a, b) is want


def test_sorts_a_queue():
    pods = [qpi("low-old", 0, 1.0), qpi("high-new", 10, 5.0), qpi("high-old", 10, 2.0), qpi("mid", 5, 0.0)]
    plugin = PrioritySort()
    def cmp(x, y):
        return -1 if plugin.less(x, y) else (1 if plugin.less(y, x) else 0)

    ordered = sorted(pods, key=functools.cmp_to_key(cmp))
    assert [p.pod.name for p in ordered] == ["high-old", "high-new", "mid", "low-old"]


def test_factory_and_framework_queue_sort_func():
    plugin = new(None, None)
    assert isinstance(plugin, QueueSortPlugin) and plugin.name() == NAME
    fw = new_framework(in_tree_registry(), single_plugin_profile("ImageLocality"))
    assert fw.queue_sort_func()(qpi("a", 1, 5.0), qpi("b", 0, 1.0)) is True
