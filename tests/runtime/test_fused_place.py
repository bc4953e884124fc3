"""``FusedPlan.place`` (filter, score and selectHost's seeded pick in one kernel call, the compiled
cycle's common case) answers what ``FusedPlan.run`` followed by ``seeded_tie`` answers: the same row,
feasible count and examined count, and the RNG left in the same state, on the plans of seeded random
clusters (and of clusters of identical nodes, where most cycles end in a tie)."""
import random

import numpy as np
import pytest

from fastsched import load_config
from fastsched._kernels import _cycle
from fastsched.runtime.compiled_cycle import _Plan, seeded_tie
from fastsched.scheduler import Scheduler
from fastsched.testing import RANDOM_RUNTIME_CLASS, make_node, make_pod, random_cluster, random_pod

# random_pod binds some pods to node names the smaller clusters here lack: they are counted there,
# as upstream's cache counts them, with a warning that says nothing about what is tested
pytestmark = pytest.mark.filterwarnings("ignore::fastsched.api.ManifestWarning")

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _plans(nodes, running, seed, pct):
    """A scheduler that scheduled seeded random pods (its engine keeps their plans), its plans."""
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": pct}), seed=seed)
    s.add_nodes(nodes)
    s.add(RANDOM_RUNTIME_CLASS)
    s.add_pods(running)
    rng = random.Random(seed)
    s.add_pods([random_pod(rng, i) for i in range(60)])
    s.run()
    (fw,) = s.profiles.values()
    engine = fw.compiled_cycle
    plans = [p for p in engine._plans.values() if type(p) is _Plan and not p.has_cycle_parts]
    assert plans, "no plan without per-cycle parts was compiled"
    return s, engine, plans


def _reference(fused, cols, order, start, k, rng):
    """run() then the scheduler's selectHost pick, as the compiled cycle did before place()."""
    found, examined, best, ties, first = fused.run(cols, order, start, k, True, 1)
    if found == 0:
        return _cycle.PLACE_NONE_FEASIBLE, found, examined
    if ties == _cycle.SCORE_OUT_OF_RANGE:
        return _cycle.PLACE_OUT_OF_RANGE, found, examined
    pick = 0 if found == 1 else seeded_tie(fused.totals, found, best, ties, rng) if ties > 1 else first
    return int(fused.selected_rows[pick]), found, examined


def _compare(s, engine, plans, seed):
    table = s.snapshot.table
    cols = _cycle.TableColumns(table)
    order = s.snapshot.order()
    n = len(order)
    pick = random.Random(seed)
    ties_seen = 0
    for i in range(300):
        plan = pick.choice(plans)
        start, k = pick.randrange(n), pick.choice([1, 2, 3, 10, max(1, n // 10), n])
        ours, theirs = np.random.default_rng(seed * 1000 + i), np.random.default_rng(seed * 1000 + i)
        want = _reference(plan.fused, cols, order, start, k, theirs)
        ties_seen += int(theirs.bit_generator.state != np.random.default_rng(seed * 1000 + i).bit_generator.state)
        got = plan.fused.place(cols, order, start, k, 1, ours.bit_generator.capsule)
        assert got == want, (i, start, k)
        assert ours.bit_generator.state == theirs.bit_generator.state, i
        # without a bit generator the caller draws: the kernel tells it to, and draws nothing
        if want[0] >= 0 and want[1] >= 2:
            bare = plan.fused.place(cols, order, start, k, 1, None)
            totals = plan.fused.totals[:want[1]]
            if np.count_nonzero(totals == totals.max()) > 1:
                assert bare == (_cycle.PLACE_DRAW_TIES, want[1], want[2])
            else:
                assert bare == want
    return ties_seen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_place_answers_as_run_then_seeded_tie_on_random_clusters(seed):
    nodes, running = random_cluster(seed, 200, 300)
    s, engine, plans = _plans(nodes, running, seed, 0)
    _compare(s, engine, plans, seed)


@pytest.mark.parametrize("seed", [4, 5])
def test_place_draws_ties_as_seeded_tie_on_identical_nodes(seed):
    nodes = [make_node(f"node-{i}", cpu="4", memory="16Gi", pods=110) for i in range(300)]
    s, engine, plans = _plans(nodes, [], seed, 100)
    ties_seen = _compare(s, engine, plans, seed)
    assert ties_seen > 50  # many cycles end in a tie: the draw is what is compared


def test_place_without_nodes_or_k_finds_nothing():
    nodes = [make_node(f"node-{i}", cpu="4", memory="16Gi", pods=110) for i in range(5)]
    s, engine, plans = _plans(nodes, [], 0, 100)
    cols = _cycle.TableColumns(s.snapshot.table)
    order = s.snapshot.order()
    capsule = np.random.default_rng(0).bit_generator.capsule
    assert plans[0].fused.place(cols, order[:0], 0, 3, 1, capsule) == (_cycle.PLACE_NONE_FEASIBLE, 0, 0)
    assert plans[0].fused.place(cols, order, 0, 0, 1, capsule) == (_cycle.PLACE_NONE_FEASIBLE, 0, 0)


def test_state_plugins_see_every_node_in_order_as_nodes_come_and_go(monkeypatch):
    """The PreFilters a plan calls each cycle for their state (``keeps_state``) get the snapshot's
    every node in order: the batch the engine reuses is rebuilt when the node set changes."""
    from fastsched.plugins.volumebinding import VolumeBinding

    seen = []
    original = VolumeBinding.pre_filter

    def spy(self, state, pod, nodes):
        seen.append((list(nodes.rows), [n.node().name for n in nodes]))
        return original(self, state, pod, nodes)

    monkeypatch.setattr(VolumeBinding, "pre_filter", spy)
    rng = random.Random(3)
    s = Scheduler(load_config(V1), seed=3)
    s.add_nodes([make_node(f"node-{i}", cpu="8", memory="32Gi", pods=110) for i in range(20)])
    for step in range(6):
        seen.clear()
        s.add_pods([random_pod(rng, 100 * step + i) for i in range(5)])
        s.run()
        assert seen, "no compiled cycle called the state plugin"
        order = s.snapshot.order()
        names = [s.snapshot.table.node_names[r] for r in order]
        assert seen[-1] == (list(order), names)
        if step % 2:
            s.add_nodes([make_node(f"extra-{step}", cpu="8", memory="32Gi", pods=110)])
        else:
            s.delete_node(f"node-{step}")


class _Rng:
    """An rng that is not a NumPy Generator (a user's object with ``integers``): the compiled
    cycle cannot draw from it in C, so ``place`` hands the ties back and the engine calls it."""

    def __init__(self, seed):
        self._g = np.random.default_rng(seed)
        self.calls = 0

    def integers(self, n):
        self.calls += 1
        return self._g.integers(n)


@pytest.mark.parametrize("seed", [6, 7])
def test_an_rng_that_is_no_generator_draws_ties_as_on_the_plugin_calls(seed):
    def run(compiled):
        nodes = [make_node(f"node-{i}", cpu="4", memory="16Gi", pods=110) for i in range(120)]
        s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 100}), seed=seed)
        s.use_compiled_cycle = compiled
        s.rng = _Rng(seed)
        s.add_nodes(nodes)
        rng = random.Random(seed)
        s.add_pods([random_pod(rng, i) for i in range(80)])
        out = [(r.pod.name, r.node_name, r.status) for r in s.run()]
        (fw,) = s.profiles.values()
        return out, s.rng.calls, fw.compiled_cycle.fused_cycles

    fused, fused_draws, fused_cycles = run(True)
    plain, plain_draws, _ = run(False)
    assert fused_cycles >= 10 and fused_draws >= 10, (fused_cycles, fused_draws)
    assert fused == plain and fused_draws == plain_draws


def test_place_walks_the_order_it_is_given_each_call():
    """``place`` keeps a view of the last order array it walked (``TableColumns``): a call with
    another array (a narrowed order, a new snapshot order) walks that one, and the first again
    after it. Kills a view kept from the first call."""
    nodes = [make_node(f"node-{i}", cpu=str(2 + i % 5), memory="16Gi", pods=110) for i in range(40)]
    s, engine, plans = _plans(nodes, [], 9, 100)
    cols = _cycle.TableColumns(s.snapshot.table)
    order = s.snapshot.order()
    orders = [order, np.ascontiguousarray(order[::-1]), order[5:].copy(), order]
    for i, o in enumerate(orders * 2):
        for k in (1, 3):
            want = _reference(plans[0].fused, cols, o, 2, k, np.random.default_rng(i))
            got = plans[0].fused.place(cols, o, 2, k, 1, np.random.default_rng(i).bit_generator.capsule)
            assert got == want, (i, k)


def _block_cluster(seed):
    """A cluster for the block walk (``_cycle.BLOCK_NODES``): nodes of three sizes (many equal
    totals: ties within and across blocks), a tenth tainted (static_ok refuses them), a node count
    that is no multiple of the block size; pods of two request sizes, some pinned to nodes so that
    the nodes fill up (NodeResourcesFit refuses them)."""
    rng = random.Random(seed)
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    nodes = [make_node(f"node-{i}", cpu=rng.choice(["2", "4", "8"]), memory="16Gi", pods=110,
                       taints=[taint] if rng.random() < 0.1 else ()) for i in range(32 * 13 + 7)]
    s = Scheduler(load_config({**V1, "percentageOfNodesToScore": 100}), seed=seed)
    s.add_nodes(nodes)
    s.add_pods([make_pod(f"fill-{i}", cpu="1", memory="1Gi", node_name=f"node-{rng.randrange(len(nodes))}")
                for i in range(300)])
    specs = [("200m", "512Mi"), ("1", "2Gi")]
    s.add_pods([make_pod(f"seed-{i}", cpu=specs[i % 2][0], memory=specs[i % 2][1]) for i in range(8)])
    s.run()
    (fw,) = s.profiles.values()
    plans = list({id(p): p for p in fw.compiled_cycle._plans.values()  # (a plan may have two keys)
                  if type(p) is _Plan and not p.has_cycle_parts and p.fused.block_summaries is not None}.values())
    assert len(plans) == 2, "the two specs' plans do not walk by blocks"
    return s, plans, rng, len(nodes)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_place_by_blocks_answers_as_the_node_walk_as_the_cluster_changes(seed):
    """``place`` takes whole blocks of the order from their summaries (the plans of pods without
    static score columns, with the score cache): the same row, counts and draw as ``run`` and
    ``seeded_tie`` walking node by node, from every kind of start (block-aligned or not, near the
    order's end so that the window wraps) and k (one block, less, the whole order), while pods are
    bound to the chosen nodes and deleted (their rows logged: blocks invalidated and summarized
    again), nodes are updated, a node is added and one removed (a new order: new blocks), and the
    plans read a transaction's table that is then restored and a fork's table (another log: every
    block invalid), and now and then a writable order (walked node by node; the blocks kept)."""
    s, plans, rng, n_nodes = _block_cluster(seed)
    bound, seen = [], {"ties": 0, "taken": 0}

    def step(s, i):
        table = s.snapshot.table
        cols = _cycle.TableColumns(table)
        order = s.snapshot.order()
        n = len(order)
        plan = rng.choice(plans)
        # now and then a writable order (a placement's rows): walked node by node, the snapshot
        # order's blocks kept (still valid through the log) for the next cycle
        writable = rng.random() < 0.1 and plan.fused.block_summaries is not None
        if writable:
            order = order.copy()
        start = rng.choice([rng.randrange(n), 32 * rng.randrange(n // 32), n - rng.randrange(1, 40)])
        k = rng.choice([1, 2, 3, 31, 32, 33, 64, 100, n // 3, n])
        ours, theirs = np.random.default_rng(seed * 1000 + i), np.random.default_rng(seed * 1000 + i)
        # place first: the reference's walk and scoring (exact whatever the cache holds) would
        # refill the entries of the window's rows and invalidate their blocks before place reads them
        got = plan.fused.place(cols, order, start, k, 1, ours.bit_generator.capsule)
        want = _reference(plan.fused, cols, order, start, k, theirs)
        seen["ties"] += int(theirs.bit_generator.state != np.random.default_rng(seed * 1000 + i).bit_generator.state)
        assert got == want, (i, start, k)
        assert ours.bit_generator.state == theirs.bit_generator.state, i
        blocks = plan.fused.block_summaries
        assert blocks is not None, "a writable order dropped the snapshot order's blocks"
        seen["taken"] += int(np.count_nonzero(blocks[:, 0] >= 0))
        # change the cluster: a pod bound to the chosen node (most steps), a bound pod deleted,
        # a node's labels updated
        if got[0] >= 0 and rng.random() < 0.8:
            name = f"b-{i}"
            s.add_pods([make_pod(name, uid=name, cpu=rng.choice(["100m", "1"]), memory="1Gi",
                                 node_name=table.node_names[got[0]])])
            bound.append(name)
        if bound and rng.random() < 0.2:
            s.delete_pod(bound.pop(rng.randrange(len(bound))))  # (by uid)
        if rng.random() < 0.05:
            j = rng.randrange(n_nodes)
            s.update_node(make_node(f"node-{j}", cpu=rng.choice(["2", "4", "8"]), memory="16Gi", pods=110,
                                    labels={"step": str(i)}))

    for i in range(400):
        step(s, i)
        if i == 100:
            s.add_nodes([make_node("node-extra", cpu="8", memory="16Gi", pods=110)])
        if i == 150:
            s.delete_node("node-3")
        if i == 200:  # binds inside a transaction, rolled back: the plans then read the restored table
            kept = list(bound)
            with s.transaction():
                for j in range(30):
                    step(s, 1000 + j)
            bound[:] = kept
        if i == 300:  # the plans read a fork's table from here on
            s = s.fork()
    assert seen["ties"] > 50  # many cycles end in ties drawn across blocks
    assert seen["taken"] > 400 * 5  # blocks were valid (summarized) in most cycles: the block walk is compared
