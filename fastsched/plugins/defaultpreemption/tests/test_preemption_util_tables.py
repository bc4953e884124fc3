"""Upstream v1.37.2 ``pkg/scheduler/framework/preemption/util_test.go`` tables not transcribed
elsewhere: ``TestFilterVictimsWithPDBViolation`` (every row), ``TestMoreImportantVictim``'s pod and
PodGroup rows (the CompositePodGroup rows are in ``test_preemption_hierarchy.py``) and
``TestPodTerminatingByPreemption`` (every row). ``TestGetPodPriority`` and ``TestTraverseHierarchyUp``
are in ``test_preemption_hierarchy.py``.
"""
from __future__ import annotations

import pytest

from fastsched.api.labels import LabelSelector
from fastsched.api.objects import PodDisruptionBudget
from fastsched.framework.podgroups import POD_GROUP_KEY_TYPE, POD_KEY_TYPE
from fastsched.framework.types import PodInfo
from fastsched.plugins.defaultpreemption.podgroup_preemption import (Victim, filter_victims_with_pdb_violation,
                                                                     more_important_victim)
from fastsched.plugins.defaultpreemption.util import NOT_STARTED, pod_terminating_by_preemption
from fastsched.testing import make_pod

NS = "default"


def _pi(name, labels, namespace=NS):
    return PodInfo(make_pod(name, namespace=namespace, labels=labels))


def _pdb(match, allowed=0, disrupted=()):
    selector = LabelSelector.from_match_labels(match) if match is not None else LabelSelector()
    return PodDisruptionBudget(name="pdb", namespace=NS, selector=selector, disruptions_allowed=allowed,
                               disrupted_pods={p: 0.0 for p in disrupted})


# TestFilterVictimsWithPDBViolation's victims (upstream: viNoPDBMatch has no namespace)
VI = {
    "viNoPDBMatch": lambda: Victim([_pi("p1", {"app": "foo"}, namespace="")], 0, NOT_STARTED, POD_KEY_TYPE),
    "viMatchPDB": lambda: Victim([_pi("p1", {"app": "foo"})], 0, NOT_STARTED, POD_KEY_TYPE),
    "viMatchPDB2": lambda: Victim([_pi("p2", {"app": "foo"})], 0, NOT_STARTED, POD_KEY_TYPE),
    "viPodGroup": lambda: Victim([_pi("p1", {"app": "foo"}), _pi("p2", {"app": "foo"})], 0, NOT_STARTED,
                                 POD_KEY_TYPE),
    "viMatchMultiplePDBs": lambda: Victim([_pi("p1", {"app": "foo", "tier": "backend"})], 0, NOT_STARTED,
                                          POD_KEY_TYPE),
}

# TestFilterVictimsWithPDBViolation: (victims, pdbs as (matchLabels or None for an empty selector,
# disruptionsAllowed, disruptedPods), expected violating as (victim, count), expected non-violating)
FILTER_PDB = {
    "no victims, no PDBs": ([], [], [], []),
    "victim with no matching PDBs": (["viNoPDBMatch"], [({"app": "bar"}, 0, ())], [], ["viNoPDBMatch"]),
    "victim matching PDB, adequate DisruptionsAllowed": (["viMatchPDB"], [({"app": "foo"}, 1, ())], [],
                                                         ["viMatchPDB"]),
    "victim matching PDB, no DisruptionsAllowed": (["viMatchPDB"], [({"app": "foo"}, 0, ())], [("viMatchPDB", 1)],
                                                   []),
    "podgroup victim with multiple pods, all violating": (["viPodGroup"], [({"app": "foo"}, 0, ())],
                                                          [("viPodGroup", 2)], []),
    "podgroup victim with multiple pods, none violating": (["viPodGroup"], [({"app": "foo"}, 2, ())], [],
                                                           ["viPodGroup"]),
    "multiple victims matching the same PDB": (["viMatchPDB", "viMatchPDB2"], [({"app": "foo"}, 1, ())],
                                               [("viMatchPDB2", 1)], ["viMatchPDB"]),
    "pod in DisruptedPods is ignored": (["viMatchPDB"], [({"app": "foo"}, 0, ("p1",))], [], ["viMatchPDB"]),
    "PDB with empty selector": (["viMatchPDB"], [(None, 0, ())], [], ["viMatchPDB"]),
    "Multiple PDBs": (["viMatchMultiplePDBs"], [({"app": "foo"}, 1, ()), ({"tier": "backend"}, 0, ())],
                      [("viMatchMultiplePDBs", 1)], []),
}


@pytest.mark.parametrize("name", list(FILTER_PDB), ids=list(FILTER_PDB))
def test_filter_victims_with_pdb_violation(name):
    victims, pdbs, want_violating, want_other = FILTER_PDB[name]
    objs = {v: VI[v]() for v in victims}
    violating, other = filter_victims_with_pdb_violation([objs[v] for v in victims],
                                                         [_pdb(*p) for p in pdbs])
    # identity, as upstream's cmp.Comparer(a == b) on the pointers
    assert [(id(v), n) for v, n in violating] == [(id(objs[v]), n) for v, n in want_violating]
    assert [id(v) for v in other] == [id(objs[v]) for v in want_other]


NOW, BEFORE = 1000.0, 500.0


def _victim(priority, key_type, n=0, start=NOT_STARTED):
    return Victim([PodInfo(make_pod(f"v{i}")) for i in range(n)], priority, start, key_type)


S, G = POD_KEY_TYPE, POD_GROUP_KEY_TYPE

# TestMoreImportantVictim, the pod and PodGroup rows: (vi1, vi2, want); a victim without
# earliestStartTime (nil upstream) is NOT_STARTED
MORE_IMPORTANT = {
    "vi1 has higher priority": (_victim(20, S), _victim(10, S), True),
    "vi2 has higher priority": (_victim(10, S), _victim(20, S), False),
    "vi1 is PG, vi2 is Pod, same priority": (_victim(10, G, 1), _victim(10, S, 1), True),
    "vi1 is Pod, vi2 is PG, same priority": (_victim(10, S, 1), _victim(10, G, 1), False),
    "both Pods, vi1 older": (_victim(10, S, 1, BEFORE), _victim(10, S, 1, NOW), True),
    "both Pods, vi2 older": (_victim(10, S, 1, NOW), _victim(10, S, 1, BEFORE), False),
    "both PGs, vi1 larger": (_victim(10, G, 2), _victim(10, G, 1), True),
    "both PGs, vi2 larger": (_victim(10, G, 1), _victim(10, G, 2), False),
    "both PGs, same size, vi1 older": (_victim(10, G, 2, BEFORE), _victim(10, G, 2, NOW), True),
    "both PGs, same size, vi2 older": (_victim(10, G, 2, NOW), _victim(10, G, 2, BEFORE), False),
}


@pytest.mark.parametrize("name", list(MORE_IMPORTANT), ids=list(MORE_IMPORTANT))
def test_more_important_victim(name):
    v1, v2, want = MORE_IMPORTANT[name]
    assert more_important_victim(v1, v2) is want


def _terminating(*conditions):
    return make_pod("p1").replace(deletion_timestamp=0.0, conditions=tuple(conditions))


def _cond(status, reason):
    return {"type": "DisruptionTarget", "status": status, "reason": reason}


# TestPodTerminatingByPreemption: (pod, want)
TERMINATING = {
    "pod without DeletionTimestamp": (make_pod("p1"), False),
    "pod with DeletionTimestamp but no DisruptionTarget condition": (_terminating(), False),
    "pod with DeletionTimestamp, DisruptionTarget condition status False": (
        _terminating(_cond("False", "PreemptionByScheduler")), False),
    "pod with DeletionTimestamp, DisruptionTarget condition reason not PreemptionByScheduler": (
        _terminating(_cond("True", "SomeOtherReason")), False),
    "pod with DeletionTimestamp, DisruptionTarget condition status True and reason PreemptionByScheduler": (
        _terminating(_cond("True", "PreemptionByScheduler")), True),
}


@pytest.mark.parametrize("name", list(TERMINATING), ids=list(TERMINATING))
def test_pod_terminating_by_preemption(name):
    pod, want = TERMINATING[name]
    assert pod_terminating_by_preemption(pod) is want
