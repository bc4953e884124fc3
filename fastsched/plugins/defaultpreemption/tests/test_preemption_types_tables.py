"""Upstream v1.37.2 ``pkg/scheduler/framework/preemption/types_test.go`` tables not transcribed
elsewhere: ``TestNewVictim`` and ``TestNewDomainVictim`` (every row). ``TestGetHighestAllAncestor``
is in ``test_preemption_hierarchy.py``, ``TestNewDomainForWorkloadPreemption`` in
``test_composite_victims.py``, ``TestNewPodGroupPreemptorResolvesPreemptionPolicy`` in
``test_podgroup_preemption.py`` (PodGroup rows) and ``test_preemption_hierarchy.py``
(CompositePodGroup rows).
"""
from __future__ import annotations

import pytest

from fastsched.api.objects import PodSchedulingGroup
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, POD_KEY_TYPE
from fastsched.framework.status import StatusError
from fastsched.framework.types import PodInfo
from fastsched.plugins.defaultpreemption.podgroup_preemption import new_domain_victim, new_victim
from fastsched.scheduler.cache import Cache
from fastsched.testing import make_node, make_pod

NOW = 100_000.0
EARLIER, LATER = NOW - 600, NOW + 600


def _pi(name, start=None, group=None):
    p = make_pod(name).replace(start_time=start)
    return PodInfo(p if group is None else p.replace(scheduling_group=PodSchedulingGroup(group)))


PI = {"pi1": _pi("p1", NOW), "pi2": _pi("p2", LATER), "pi3": _pi("p3", EARLIER), "pi4": _pi("p4"),
      "pi5": _pi("p5", NOW, "pg1")}

# TestNewVictim: (podInfos, priority, keyType, wantErr, want (priority, earliestStartTime, keyType))
NEW_VICTIM = {
    "empty pods slice returns error": ([], 10, POD_KEY_TYPE, True, None),
    "empty keyType returns error": (["pi1"], 20, "", True, None),
    "single pod without scheduling group": (["pi1"], 20, POD_KEY_TYPE, False, (20, NOW, POD_KEY_TYPE)),
    "multiple pods with mixed start times (including nil)": (["pi4", "pi2", "pi3"], 30, POD_KEY_TYPE, False,
                                                             (30, EARLIER, POD_KEY_TYPE)),
    "pod with scheduling group is constructed as pod group": (["pi5"], 40, POD_GROUP_KEY_TYPE, False,
                                                              (40, NOW, POD_GROUP_KEY_TYPE)),
}


@pytest.mark.parametrize("name", list(NEW_VICTIM), ids=list(NEW_VICTIM))
def test_new_victim(name):
    infos, priority, key_type, want_err, want = NEW_VICTIM[name]
    pods = [PI[i] for i in infos]
    if want_err:
        with pytest.raises(ValueError):
            new_victim(pods, priority, key_type)
        return
    v = new_victim(pods, priority, key_type)
    assert (v.priority(), v.earliest_start_time(), v.type()) == want
    assert v.pods() == pods and all(a is b for a, b in zip(v.pods(), pods))


# TestNewDomainVictim: (nodes, pods as (name, node), priority, wantErr, wantAffectedNodes)
NEW_DOMAIN_VICTIM = {
    "pod on missing node returns error": (["node1"], [("p1", "missing-node")], 10, True, None),
    "multiple pods on same and different nodes deduplicates affectedNodes": (
        ["node1", "node2"], [("p1", "node1"), ("p2", "node1"), ("p3", "node2")], 20, False, {"node1", "node2"}),
}


@pytest.mark.parametrize("name", list(NEW_DOMAIN_VICTIM), ids=list(NEW_DOMAIN_VICTIM))
def test_new_domain_victim(name):
    nodes, pods, priority, want_err, want = NEW_DOMAIN_VICTIM[name]
    cache = Cache()
    for n in nodes:
        cache.add_node(make_node(n))
    infos = [PodInfo(make_pod(p, node_name=n)) for p, n in pods]
    v = new_victim(infos, priority, POD_KEY_TYPE)
    if want_err:
        with pytest.raises(StatusError, match='failed to get node info for node "missing-node" from snapshot'):
            new_domain_victim(cache.snapshot, v)
        return
    dv = new_domain_victim(cache.snapshot, v)
    assert set(dv.affected_nodes()) == want
    assert all(dv.affected_nodes()[n].node().name == n for n in want)
    assert (dv.priority(), dv.type(), dv.pods()) == (priority, POD_KEY_TYPE, infos)
