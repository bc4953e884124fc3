"""NodeResourcesFit Filter + Fit Score + BalancedAllocation Score for one pod on 5,000 nodes:
the batch methods over a NodeBatch against upstream's one-node-at-a-time methods.

Per-node runs twice: over the snapshot's NodeInfo views (what the runtime hands per-node plugins)
and over detached, precomputed NodeInfo objects (closest to upstream, whose NodeInfos are built
ahead of the cycle).

Run: python -m pytest benchmarks/bench_noderesources.py --benchmark-only

What is timed: one pod's Filter and Scores over every node of a snapshot built in the set-up. The
batch test's pytest-benchmark figures are *warm* calls; extra_info adds the *first* call on the
fresh snapshot (cold), the warm median and one per-node call over the views
(``common.plugin_timings``, CPU time of the process).
"""
import pytest
from common import plugin_timings

from fastsched.framework import CycleState, NodeInfo
from fastsched.plugins.noderesources import FACTORIES
from fastsched.testing import make_pod, random_snapshot

N_NODES = 5_000


@pytest.fixture(scope="module")
def cluster():
    snapshot = random_snapshot(42, N_NODES, 2 * N_NODES)
    incoming = make_pod("incoming", requests={"cpu": "250m", "memory": "256Mi", "nvidia.com/gpu": "1"})
    fit = FACTORIES["NodeResourcesFit"](None, None)
    balanced = FACTORIES["NodeResourcesBalancedAllocation"](None, None)
    return snapshot, incoming, fit, balanced


def run_batch(snapshot, incoming, fit, balanced):
    nodes = snapshot.batch()
    state = CycleState()
    fit.pre_filter(state, incoming, nodes)
    verdicts = fit.filter_vectorized(state, incoming, nodes)
    feasible = nodes.select(verdicts.codes == 0)
    fit.pre_score(state, incoming, feasible)
    balanced.pre_score(state, incoming, feasible)
    fit_scores, _ = fit.score_vectorized(state, incoming, feasible)
    balanced_scores, _ = balanced.score_vectorized(state, incoming, feasible)
    return feasible.names, fit_scores.tolist(), balanced_scores.tolist()


def run_per_node(node_infos, incoming, fit, balanced):
    state = CycleState()
    fit.pre_filter(state, incoming, node_infos)
    feasible = [ni for ni in node_infos if fit.filter(state, incoming, ni) is None]
    fit.pre_score(state, incoming, feasible)
    balanced.pre_score(state, incoming, feasible)
    fit_scores = [fit.score(state, incoming, ni)[0] for ni in feasible]
    balanced_scores = [balanced.score(state, incoming, ni)[0] for ni in feasible]
    return [ni.name for ni in feasible], fit_scores, balanced_scores


def test_batch(benchmark, cluster):
    snapshot, incoming, fit, balanced = cluster  # test_batch runs first: nothing has run on it yet
    benchmark.extra_info["nodes"] = N_NODES
    views = list(snapshot.batch())
    benchmark.extra_info.update(**plugin_timings(lambda: run_batch(snapshot, incoming, fit, balanced),
                                                 lambda: run_per_node(views, incoming, fit, balanced)))
    names, fit_scores, _ = benchmark(run_batch, snapshot, incoming, fit, balanced)
    assert 0 < len(names) < N_NODES and len(set(fit_scores)) > 10


def test_per_node_views(benchmark, cluster):
    snapshot, incoming, fit, balanced = cluster
    benchmark.extra_info["nodes"] = N_NODES
    views = list(snapshot.batch())
    result = benchmark(run_per_node, views, incoming, fit, balanced)
    assert result == run_batch(snapshot, incoming, fit, balanced)


def test_per_node_node_infos(benchmark, cluster):
    snapshot, incoming, fit, balanced = cluster
    benchmark.extra_info["nodes"] = N_NODES
    node_infos = [NodeInfo(view.node(), [pi.pod for pi in view.pods]) for view in snapshot.batch()]
    result = benchmark(run_per_node, node_infos, incoming, fit, balanced)
    assert result == run_batch(snapshot, incoming, fit, balanced)
