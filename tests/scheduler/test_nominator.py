"""Nominator: upstream v1.34 ``nominator.go`` semantics (cases after TestPriorityQueue_NominatedPodsForNode,
TestPriorityQueue_UpdateNominatedPodForNode and TestNominatedNodeCleanUp)."""
from __future__ import annotations

from fastsched.framework import PodNominator
from fastsched.framework.types import NominatingInfo, NominatingMode, PodInfo, PostFilterResult
from fastsched.scheduler.backend.queue.nominator import Nominator, nominating_mode
from fastsched.testing import make_pod

OVERRIDE = NominatingMode.OVERRIDE


def pi(name, nominated="", **kw) -> PodInfo:
    pod = make_pod(name, **kw)
    if nominated:
        pod = pod.replace(nominated_node_name=nominated)
    return PodInfo(pod)


def names(infos):
    return [i.pod.name for i in infos]


def test_is_a_pod_nominator():
    assert isinstance(Nominator(), PodNominator)


def test_modes():
    assert nominating_mode(None) == NominatingMode.NOOP
    assert nominating_mode(NominatingInfo("n", OVERRIDE)) == OVERRIDE
    assert nominating_mode(PostFilterResult.nominating("n")) == OVERRIDE
    assert nominating_mode(PostFilterResult()) == NominatingMode.NOOP


def test_override_noop_and_none():
    n = Nominator()
    a = pi("a", nominated="from-status")
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))      # Override: the info's node
    assert names(n.nominated_pods_for_node("n1")) == ["a"]
    assert n.nominated_pods_for_node("from-status") == []
    n.add_nominated_pod(a, NominatingInfo("ignored", NominatingMode.NOOP))  # Noop: the pod's status
    assert n.nominated_node_for(a.pod.uid) == "from-status"
    assert n.nominated_pods_for_node("n1") == []
    b = pi("b", nominated="n2")
    n.add_nominated_pod(b, None)                                  # None reads as Noop
    assert names(n.nominated_pods_for_node("n2")) == ["b"]
    assert n.nominated_node_names() == {"from-status", "n2"}


def test_empty_node_name_clears_the_nomination():
    n = Nominator()
    a = pi("a")
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))
    n.add_nominated_pod(a, NominatingInfo("", OVERRIDE))
    assert len(n) == 0 and n.nominated_node_names() == set()
    n.add_nominated_pod(a, None)  # no status.nominatedNodeName either
    assert a.pod.uid not in n


def test_nomination_order_and_single_instance():
    n = Nominator()
    a, b, c = pi("a"), pi("b"), pi("c")
    for x in (a, b, c):
        n.add_nominated_pod(x, NominatingInfo("n1", OVERRIDE))
    assert names(n.nominated_pods_for_node("n1")) == ["a", "b", "c"]
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))  # re-nominating moves it to the end
    assert names(n.nominated_pods_for_node("n1")) == ["b", "c", "a"]
    n.add_nominated_pod(b, NominatingInfo("n2", OVERRIDE))  # a pod is nominated to one node only
    assert names(n.nominated_pods_for_node("n1")) == ["c", "a"]
    assert names(n.nominated_pods_for_node("n2")) == ["b"]
    # the returned list is a copy
    n.nominated_pods_for_node("n1").clear()
    assert len(n.nominated_pods_for_node("n1")) == 2


def test_delete():
    n = Nominator()
    a, b = pi("a"), pi("b")
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))
    n.add_nominated_pod(b, NominatingInfo("n1", OVERRIDE))
    n.delete_nominated_pod_if_exists(a.pod)
    assert names(n.nominated_pods_for_node("n1")) == ["b"]
    n.delete_nominated_pod_if_exists(b.pod)
    n.delete_nominated_pod_if_exists(b.pod)  # absent: no error
    assert n.nominated_node_names() == set() and len(n) == 0


def test_update_keeps_in_memory_nomination_when_neither_version_has_one():
    """A preemption nomination survives an update that arrives before the status update."""
    n = Nominator()
    old = pi("a")
    n.add_nominated_pod(old, NominatingInfo("n1", OVERRIDE))
    new = PodInfo(old.pod.replace(labels={"v": "2"}))
    n.update_nominated_pod(old.pod, new)
    got = n.nominated_pods_for_node("n1")
    assert len(got) == 1 and got[0] is new


def test_update_follows_status_changes():
    n = Nominator()
    old = pi("a", nominated="n1")
    n.add_nominated_pod(old, None)
    moved = PodInfo(old.pod.replace(nominated_node_name="n2"))
    n.update_nominated_pod(old.pod, moved)                 # nominatedNodeName updated
    assert n.nominated_pods_for_node("n1") == [] and n.nominated_pods_for_node("n2") == [moved]
    cleared = PodInfo(moved.pod.replace(nominated_node_name=""))
    n.update_nominated_pod(moved.pod, cleared)             # nominatedNodeName removed
    assert len(n) == 0
    # an update of a never-nominated pod without the field nominates nothing
    n.update_nominated_pod(pi("z").pod, pi("z"))
    assert len(n) == 0


def test_pod_lister_guards_against_deleted_and_bound_pods():
    live = {}
    n = Nominator(pod_lister=lambda ns, name: live.get((ns, name)))
    a = pi("a")
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))  # unknown to the lister
    assert len(n) == 0
    live[("default", "a")] = a.pod.with_node_name("n9")     # already bound
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))
    assert len(n) == 0
    live[("default", "a")] = a.pod
    n.add_nominated_pod(a, NominatingInfo("n1", OVERRIDE))
    assert names(n.nominated_pods_for_node("n1")) == ["a"]


def test_read_only_view_and_version():
    nm = Nominator()
    view = nm.nominated_pods_by_node()
    assert dict(view) == {} and nm.version == 0
    a, b = pi("a", "n1"), pi("b", "n1")
    nm.add_nominated_pod(a)
    nm.add_nominated_pod(b)
    assert {n: names(ps) for n, ps in view.items()} == {"n1": ["a", "b"]}  # a live view
    assert view["n1"] == nm.nominated_pods_for_node("n1")
    try:
        view["n2"] = []  # type: ignore[index]
    except TypeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("the view must be read-only")
    v = nm.version
    nm.delete_nominated_pod_if_exists(make_pod("not-nominated"))
    assert nm.version == v  # nothing changed
    nm.add_nominated_pod(pi("a", "n2"))  # moved
    assert nm.version > v and {n: names(ps) for n, ps in view.items()} == {"n1": ["b"], "n2": ["a"]}
    v = nm.version
    nm.update_nominated_pod(b.pod, pi("b", "n1"))  # the PodInfo is replaced
    assert nm.version > v
    v = nm.version
    nm.delete_nominated_pod_if_exists(a.pod)
    assert nm.version > v and "n2" not in view


def test_the_journal_names_the_node_of_every_version_step():
    """nodes_changed_since(v): the nodes whose nominations changed after version v, one per step
    (a re-filing is two: the removal and the addition); None once v is older than the journal."""
    from fastsched.scheduler.backend.queue import nominator as nominator_module

    n = Nominator()
    a, b = pi("a", "n1"), pi("b", "n2")
    n.add_nominated_pod(a)
    v = n.version
    n.add_nominated_pod(b)
    n.add_nominated_pod(a)  # re-filed: removed from n1, added to n1
    n.delete_nominated_pod_if_exists(b.pod)
    n.delete_nominated_pod_if_exists(b.pod)  # not nominated any more: no step
    assert n.nodes_changed_since(v) == ["n2", "n1", "n1", "n2"]
    assert n.nodes_changed_since(n.version) == []
    assert n.nodes_changed_since(n.version + 1) is None
    for _ in range(nominator_module._JOURNAL_SIZE):
        n.add_nominated_pod(a)
    assert n.nodes_changed_since(v) is None
    assert n.nodes_changed_since(n.version - 2) == ["n1", "n1"]
