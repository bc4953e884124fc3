"""The plugin-call path filters the nodes a window at a time (``_filter_until_enough``) and stops
once more than numFeasibleNodesToFind nodes fit; which windows it takes must not change anything
upstream would see: the same node, status, message and attempts for every pod, and the same round-
robin index, with windows of one node each as with the default ones (a rest no larger than the
window joined to it)."""
import random

import pytest

from fastsched import load_config
from fastsched.scheduler import Scheduler, schedule_one
from fastsched.testing import make_node, make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _run(seed: int, nodes: int, pct: int) -> tuple:
    rng = random.Random(seed)
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": pct}), seed=seed)
    s.use_compiled_cycle = False  # the plugin-call path, whose windows these are
    cpus = [rng.choice((2, 4, 8)) for _ in range(nodes)]
    s.add_nodes([make_node(f"n{i}", cpu=str(c), memory="16Gi", pods="20") for i, c in enumerate(cpus)])
    # most nodes nearly full (half a CPU left), so that pods fit on a few nodes anywhere in the
    # order, or on none
    s.add_pods([make_pod(f"busy-{i}", node_name=f"n{i}", cpu=f"{c * 1000 - 500}m")
                for i, c in enumerate(cpus) if rng.random() < 0.97])
    s.add_pods([make_pod(f"p{i}", uid=f"uid-p{i}", cpu=f"{rng.choice((400, 1000, 3000))}m",
                         priority=rng.choice((0, 0, 5))) for i in range(120)])
    results = s.run()
    return [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in results], s.next_start_node_index


@pytest.mark.parametrize(("seed", "nodes", "pct"), [(1, 300, 0), (2, 300, 30), (3, 600, 50)])
def test_filter_windows_do_not_change_outcomes(monkeypatch, seed, nodes, pct):
    want = _run(seed, nodes, pct)
    assert any(node for _, node, *_ in want[0]) and any(not node for _, node, *_ in want[0])
    if seed == 1:  # (the comparison sees a change: a different numFeasibleNodesToFind makes one)
        monkeypatch.setattr(schedule_one, "num_feasible_nodes_to_find", lambda pct, n: 1)
        assert _run(seed, nodes, pct) != want
        monkeypatch.undo()
    monkeypatch.setattr(schedule_one, "FILTER_WINDOW_MIN", 1)
    got = _run(seed, nodes, pct)
    assert got == want
