"""The API server's admission of pods to schedule: DefaultTolerationSeconds (on by default in
kube-apiserver) gives a pod that does not tolerate them a 300 s NoExecute toleration of the
not-ready and unreachable taints, as pods created through a cluster have them."""
import pytest

from fastsched import Scheduler
from fastsched.api import Toleration
from fastsched.testing import make_node, make_pod

NOT_READY = Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300)
UNREACHABLE = Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300)


def admitted(tolerations=None, **kw):
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add_pod(make_pod("p", tolerations=tolerations, **kw) if tolerations is not None else make_pod("p", **kw))
    return s.get_pod("default", "p")


@pytest.mark.parametrize("given,added", [
    (None, [NOT_READY, UNREACHABLE]),
    ([{"operator": "Exists"}], []),                                   # empty key and effect: tolerates all
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
     [UNREACHABLE]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}], [NOT_READY]),  # no effect: any effect
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     [NOT_READY, UNREACHABLE]),                                       # another effect does not count
    ([{"operator": "Exists", "effect": "NoExecute"}], []),            # any key, NoExecute
])
def test_default_toleration_seconds(given, added):
    pod = admitted(given)
    kept = list(pod.tolerations[:len(given or ())])
    assert list(pod.tolerations[len(kept):]) == added


def test_a_bound_pod_is_left_as_it_came():
    pod = admitted(node_name="n0")
    assert pod.tolerations == ()


def test_a_pod_schedules_onto_a_node_tainted_unreachable_no_execute_but_not_no_schedule():
    s = Scheduler()
    s.add_nodes([make_node("gone", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]),
                 make_node("cordoned", taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}])])
    s.add_pods([make_pod("a"), make_pod("b")])
    assert {r.pod.name: r.node_name for r in s.run()} == {"a": "gone", "b": "gone"}
