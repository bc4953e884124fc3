"""The snapshot's placement (TopologyAwareWorkloadScheduling): upstream ``snapshot_test.go``
``TestSnapshot_Placement`` (v1.37.2), and ``AssumePlacement``'s all-nodes and unknown-node cases."""
from __future__ import annotations

import pytest

from fastsched.framework import Placement
from fastsched.snapshot import build_snapshot
from fastsched.snapshot.snapshot import PlacementError
from fastsched.testing import make_node


def snap():
    return build_snapshot([make_node(n) for n in ("n1", "n2", "n3")])


def test_no_placement_is_every_node():
    s = snap()
    assert s.get_placement() is None
    assert s.num_nodes_in_placement() == 3 and len(s.placement_batch()) == 3 and s.in_placement("n1")


def test_a_placement_limits_the_placement_nodes_only():
    s = snap()
    placement = Placement("p", [s.get("n3"), s.get("n2")])
    s.assume_placement(placement)
    assert s.get_placement() is placement
    assert s.num_nodes_in_placement() == 2
    assert s.placement_batch().names == ["n3", "n2"]  # the placement's order
    assert not s.in_placement("n1") and s.in_placement("n3")
    # List and Get are not affected
    assert len(s.batch()) == 3 and s.get("n1").node().name == "n1"
    s.forget_placement()
    assert s.get_placement() is None and s.num_nodes_in_placement() == 3 and s.in_placement("n1")


def test_every_node_is_no_placement_and_an_unknown_node_is_an_error():
    s = snap()
    s.assume_placement(Placement("all", s.batch()))
    assert s.get_placement() is None
    ghost = build_snapshot([make_node("n9")]).get("n9")
    s.assume_placement(Placement("p", [s.get("n1")]))
    with pytest.raises(PlacementError, match="node n9 in placement is not present in snapshot"):
        s.assume_placement(Placement("bad", [ghost]))
    assert s.get_placement() is None


def test_assumed_placement_is_what_get_placement_returns():
    """schedule_one reads ``assumed_placement`` instead of calling ``get_placement`` (exact types):
    the two agree through assume, forget, every-node and the unknown-node error."""
    s = snap()
    assert s.assumed_placement is None
    placement = Placement("p", [s.get("n3"), s.get("n2")])
    s.assume_placement(placement)
    assert s.assumed_placement is placement is s.get_placement()
    s.forget_placement()
    assert s.assumed_placement is None is s.get_placement()
    s.assume_placement(placement)
    s.assume_placement(Placement("all", [s.get("n1"), s.get("n2"), s.get("n3")]))
    assert s.assumed_placement is None is s.get_placement()
