"""The node part of pre_filter_state_batch and pre_score_state_batch is cached per pod spec and
node set (filtering._node_parts, scoring._node_parts):
a run whose nodes change between pods of one template (a zone relabelled, a node added, a node
tainted: nodeTaintsPolicy Honor leaves it out) ends as a run that rebuilds it for every pod."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.plugins.podtopologyspread import filtering, scoring
from fastsched.plugins.podtopologyspread.common import SpecNodeParts
from fastsched.testing import make_node, pod_manifest


class _NeverHit(SpecNodeParts):
    def get(self, key, refs):
        return None


def _spread_pod(i: int, when: str) -> dict:
    m = pod_manifest(f"p{i}", cpu="100m", labels={"app": "web"})
    m["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": when,
         "labelSelector": {"matchLabels": {"app": "web"}}, "nodeTaintsPolicy": "Honor"}]
    return m


def _run(cached: bool, when: str, monkeypatch) -> list:
    monkeypatch.setattr(filtering, "_NODE_PARTS", SpecNodeParts() if cached else _NeverHit())
    monkeypatch.setattr(scoring, "_NODE_PARTS", SpecNodeParts() if cached else _NeverHit())
    s = Scheduler(seed=3)
    s.add_nodes([make_node(f"n{i}", cpu="8", labels={"zone": f"z{i % 3}"}) for i in range(9)])
    out = []
    for step in range(4):
        # one template throughout: the cache would serve every pod but for the node changes
        s.add_pods([_spread_pod(10 * step + i, when) for i in range(7)])
        out += [(r.pod.name, r.status, r.node_name, r.message) for r in s.run()]
        if step == 0:  # a node moves to a new zone
            s.update_node(make_node("n4", cpu="8", labels={"zone": "z9"}))
        elif step == 1:  # a new node in a new zone
            s.add_nodes([make_node("n9", cpu="8", labels={"zone": "z7"})])
        elif step == 2:  # a taint: excluded for pods that do not tolerate it (nodeTaintsPolicy Honor)
            s.update_node(make_node("n2", cpu="8", labels={"zone": "z2"},
                                    taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]))
    return out


@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])  # Filter's state, Score's state
def test_runs_agree_with_the_node_part_rebuilt_for_every_pod(when, monkeypatch):
    cached = _run(True, when, monkeypatch)
    rebuilt = _run(False, when, monkeypatch)
    assert cached == rebuilt
    assert sum(status == "Scheduled" for _, status, _, _ in cached) >= 20
    assert any(node == "n9" for _, _, node, _ in cached)  # the new zone was used
    if when == "DoNotSchedule":  # (a soft constraint only scores: n2 stays feasible)
        assert not any(node == "n2" for name, _, node, _ in cached if int(name[1:]) >= 30)  # tainted: left out
